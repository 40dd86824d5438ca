// Package lualimit holds a gopher-lua script to a memory limit and makes
// its long library calls stop at its context's deadline, so that neither
// a huge allocation nor a long call can take the process down or keep it
// past its time.
//
// Memory. Go's own failure to allocate ends the process ("fatal error:
// runtime: out of memory"), so a script must be refused before Go is
// asked. Two kinds of look do it:
//
//   - before a string is built, its size: string.rep, upper, lower,
//     reverse, char and format are wrapped here; .., table.concat and
//     gsub tell lua51's growth check (lua51.SetGrowthCheck) as their
//     result grows; loadstring counts the compiler's memory, and
//     coroutine.create and wrap a new coroutine's stacks;
//   - as the script runs, Go's heap: every CheckEvery loop iterations and
//     calls of any state (the VM's FORLOOP, TFORLOOP, backward JMP, CALL
//     and TAILCALL instructions, counted per state), which bounds table
//     growth and everything else between two looks.
//
// A look finds the Lua values' memory as Go's heap (the whole process's,
// from runtime/metrics) less what the host says is not Lua's (Memory.
// NotLua: host arrays). When that and the bytes about to be allocated pass
// the limit, garbage is collected and the heap read again; only if it is
// still over does the script fail, with "not enough memory" (no position,
// as in Lua 5.1), an error pcall catches. The limit is therefore exceeded
// by at most what a script allocates between two looks (in a loop,
// CheckEvery iterations' worth, and for a table whose array part doubles,
// the step that doubles it), never by a string built in one call.
// Memory a failed script held comes back at the next collection.
//
// Lua values are not told apart from the rest of the process's Go heap:
// in a program that runs several states at once, all of their values
// count against each one's limit.
//
// Deadlines. string.rep builds a large result in pieces, and loading reads
// its source (internal/luac) so that each looks at the state's context as
// the VM does and stops with the context's error; pattern matching,
// table.concat and table.sort do the same in internal/lua51.
package lualimit
