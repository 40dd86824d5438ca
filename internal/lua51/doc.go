// Package lua51 makes a gopher-lua state behave like the reference Lua 5.1
// interpreter where gopher-lua's virtual machine, library or protected
// calls differ.
//
// It owns three things: PCall, a protected call with Lua 5.1's handling of
// upvalues on errors, for glua's own top-level calls; Open, which puts Lua
// 5.1's versions of some library functions into a state; and the virtual
// machine's arithmetic, concatenation, call and numeric-for instructions, with
// Lua 5.1's runtime error messages (vm.go, arith.go, names.go, pow.go). It
// does not compile anything (internal/luac corrects the compiler). Weak
// tables and __gc are gopher-lua's.
//
// The instructions: gopher-lua dispatches each opcode through a
// package-level table of handlers; at init this package replaces the
// entries for + - * / % ^, unary minus, .. and the numeric for's
// preparation with its own, which read the same registers through
// unexported fields found by reflection, and leaves every other opcode to
// gopher-lua. The table is process-wide, so every gopher-lua state in a
// program that links this package runs them. They give Lua 5.1's answers:
// % is a - floor(a/b)*b (gopher-lua's is math.Mod, exact, so 2^900 % 3 is
// 1 there and 0 in Lua 5.1); ^ is C's pow, correctly rounded (Go's
// math.Pow is a unit in the last place off for most arguments); minus
// zero stays minus zero (gopher-lua's number allocator returns a shared +0
// for it); a NaN has the sign the processor gives it (-nan for 5 % 0 on
// x86-64, as lua5.1 prints); numeric strings are converted before a
// metamethod is tried, not after; .. writes numbers as "%.14g", not in
// Go's shortest form; a numeric for converts string bounds, and its errors
// read "'for' initial value must be a number". gopher-lua's compiler folds
// arithmetic on constants its own way, before any of this runs.
//
// Errors name what failed as Lua 5.1's getobjname does, by symbolic
// execution of the function's bytecode up to the failing instruction:
// "attempt to call global 'x' (a nil value)", "attempt to index field 'k'
// (a number value)", "attempt to compare two table values", and for a Go
// function's argument error the name the call used, "bad argument #1 to
// 'floor' (...)", counting from the object in a method call and saying
// "no value" for a missing argument. The replaced instructions raise them
// so; the errors gopher-lua's own instructions raise (call, index, #,
// comparison) are reworded where they are raised, before anything is
// unwound: in PCall's message handler, and in a coroutine, whose errors
// no handler sees, in the function gopher-lua calls to raise (its Panic
// field), which coroutine.resume and the functions coroutine.wrap returns
// put in place before each resume. A message is reworded only when it is gopher-lua's, at the
// position of the instruction that raises it, so a script's own error
// with the same words is left as it is. TestGopherLuaJumpTableIsKnown
// fails when the table or the fields change shape, and the handlers are
// then not installed.
//
// Each replacement below names what gopher-lua v1.1.2 does wrong, so that
// it can go once a fixed release is used. TestPlainGopherLuaShowsEachDefect
// runs every defect against plain gopher-lua and fails when one is fixed
// upstream; TestGopherLuaLayoutIsKnown fails when gopher-lua's unexported
// fields, which PCall reads, change.
//
// PCall, pcall and xpcall: gopher-lua closes upvalues on an error only
// when no message handler is set, and then closes those of every frame,
// including the frames below the protected call that go on running, so a
// local assigned after a caught error is no longer seen by its closure.
// With a handler it closes none, so closures made in the unwound frames
// read registers that are then cleared and reused. L.PCall also clears
// the handler flag on return even where an enclosing call had set it, so
// after any inner pcall the outer call closes everything again. Lua 5.1
// closes, when an error reaches a protected call, exactly the upvalues of
// the frames it unwinds, with the values they hold. PCall always gives
// gopher-lua a message handler of its own, which runs where the error was
// raised, before anything is unwound: it closes the upvalues opened since
// the call began, then calls the caller's handler, if any, as if from the
// frame that raised the error, and PCall restores the flag afterwards.
// gopher-lua's growing call stack never reports itself full and panics in
// the push instead, with no position and no room left for a handler; the
// call instruction is replaced so that it raises "stack overflow" itself,
// with the calling function's position, before a call passes
// Options.CallStackSize, and the stack gets room past that bound for
// message handlers (depth.go). Two overflows still escape gopher-lua's
// PCall when it has a handler (a full value stack leaves no room to push
// the handler; a call the instruction does not make, such as a
// metamethod's, can still reach the stack's end): PCall recovers them,
// puts the state back as after any error, and words both as Lua 5.1's
// "stack overflow" with the [lua] setting that bounds each (guard.go).
// xpcall also takes any handler value, as Lua 5.1's does (a non-function
// gives "error in error handling" when needed), passes f no arguments,
// hands f's "attempt to call" error to the handler, and calls the handler
// again on an error inside it.
//
// error: gopher-lua's requires a message (error() is error(nil) in Lua
// 5.1), and positions a message at the nearest Lua function past Go ones,
// so pcall(error, "e") gives "file:1: e" where Lua 5.1 gives "e"; levels
// that tail calls took away get the bottom frame's position.
//
// assert: gopher-lua's reads the message as a format ("100%" loses its
// "%"), refuses a number as the message and takes no argument as false.
//
// An error a function of the standard library raises with L.RaiseError
// has gopher-lua's position: that of the nearest Lua function past Go
// ones, so pcall(string.gsub, "x", "x", {x = true}) and pcall(assert,
// false) carried one. Lua 5.1's luaL_error gives the position of the
// running function's caller, none when that is a C function; the message
// handlers take the position off where the caller is a Go function
// (unseen.go). Functions that position their own errors as Lua 5.1 does
// (error, assert, coroutine.wrap's) keep theirs, and so do a host's own
// functions (glua's modules), which no Lua 5.1 defines.
//
// table.concat: gopher-lua's pushes every element onto the registry and
// fails with "registry overflow" (5,120 slots by default; with a growable
// registry, after growing it 32 slots at a time) and clamps the range
// into 1..#t. This one builds the string in Go.
//
// table.maxn: gopher-lua's looks only at the array part.
//
// table.insert and table.remove: gopher-lua's insert ignores arguments
// past the third (Lua 5.1: "wrong number of arguments to 'insert'"), and
// its remove returns nil where there is nothing to remove, where Lua
// 5.1's returns no value. Both are Lua 5.1's now.
//
// setmetatable, next and string.char accept what Lua 5.1 refuses: a
// metatable for a number or string (it would apply to every one), a key
// the table does not hold (gopher-lua answers some entry), a code outside
// 0..255 (gopher-lua keeps its low byte). Each now raises Lua 5.1's
// error; string.char also takes numeric strings, as there.
//
// string.find, string.match, string.gmatch and string.gsub keep gopher-
// lua's pattern matcher, with Lua 5.1's handling around it: find and
// match clamp a start past the end to the end (gopher-lua's find answers
// 1, 0 for an empty pattern whatever the start); gmatch returns an
// iterator that can be called by hand (gopher-lua's needs a state
// argument that only a for loop passes) and matches a leading "^"
// literally; gsub replaces nothing for a count of 0 or less, takes a
// number as the replacement, and raises "invalid replacement value" for
// a table or function value that is neither a string, a number, false
// nor nil (gopher-lua replaced the match with nothing). All four run on
// this package's own Lua 5.1 matcher (matcher.go), not gopher-lua's, which
// has no %f (frontier) class, words malformed patterns its own way and was
// 15 times slower; TestOwnMatcherAgreesWithLua51OnRandomPatterns runs it
// on every kind of pattern beside lua5.1.
//
// The string library's functions get a number given for a string as text
// in Lua 5.1's form: gopher-lua's CheckString writes it in Go's, so
// string.len(1/3) was 18 and string.len(1/0) 4 ("+Inf"); each now turns
// such arguments into strings first (textArgs), and CheckString and
// OptString give other Go functions (loadstring) the same.
//
// tostring, io.write and file:write: gopher-lua's write numbers in Go's
// shortest form ("0.3333333333333333", "1000000000000000", "+Inf", "NaN");
// these write them as Lua 5.1 does, "%.14g" ("0.33333333333333",
// "1e+15", "inf", "nan"). ToString and NumberString give glua's own
// printing the same form.
//
// tonumber: gopher-lua's reads "1e2" as nil (an exponent needs a point)
// and takes Go's number syntax; this one reads strtod's and strtoul's.
//
// string.format: gopher-lua's is Go's fmt.Sprintf: "%!s(MISSING)" where
// Lua raises, %q with Go escapes Lua 5.1 cannot read, %g with every digit,
// %x of a negative number with a minus sign, "+Inf", no numeric strings
// for %f. This one formats each item as C's printf does.
//
// collectgarbage and gcinfo: gopher-lua's collectgarbage runs a full
// collection whatever the option and returns nothing, so
// collectgarbage("count") is nil; gcinfo is missing. Both now report Go's
// heap (the whole process's: gopher-lua keeps no count of its own), "step"
// counts work towards a cycle, and the tuning options remember their value.
//
// math.random and math.randomseed: gopher-lua's seed Go's process-wide
// generator with rand.Seed, which does nothing since Go 1.24, so a seeded
// script never repeats, and math.random(0) fails with Go's "invalid
// argument to Intn". These draw from glibc's rand() generator, one per
// state, so a seed gives the numbers lua5.1 gives on Linux; an unseeded
// state starts from a seed the operating system supplies (lua5.1 always
// starts from srand(1)), so that unseeded scripts still vary. The
// arguments are checked and scaled as in Lua 5.1.
//
// math.huge is infinity (gopher-lua's is the largest finite number);
// math.mod is math.fmod (gopher-lua's is the % operator).
//
// math.pow is the ^ operator's pow; gopher-lua's is math.Pow.
//
// Files get Lua 5.1's __gc, which closes a file other than the standard
// three; gopher-lua's have none (Go's collector never calls it, a script
// can).
//
// coroutine.yield refuses to yield from inside a Go function (pcall, a sort
// comparator), where gopher-lua's yield leaves the coroutine broken;
// coroutine.resume refuses a running, normal or dead coroutine with Lua
// 5.1's words, and the 198th nested resume with "C stack overflow", where
// lua5.1 refuses it: each nests a Go call, and without end they would
// exhaust Go's stack. The string builders (.., table.concat, gsub) tell
// the growth check a host installs (SetGrowthCheck) how big their result
// is about to be.
//
// debug.traceback is Lua 5.1's: the first 11 and last 10 levels of a deep
// stack (gopher-lua's shows 7 and 7), "[C]" and "?" for Go functions,
// "(tail call)", the yield a suspended coroutine waits in, and a message
// that is not a string returned as it is.
//
// debug.getinfo, getfenv and setfenv count levels as Lua 5.1 does, a
// tail call's level included (gopher-lua's answered it with the main
// chunk). debug.getinfo takes a thread, gives only the fields its options
// ask for, short_src, "C" for a Go function (with source "=[C]" and lines
// -1), activelines ("L"), namewhat (as internal/luac recorded the call)
// and no made-up name; its argument errors are Lua 5.1's.
// debug.getlocal and debug.setlocal take a thread and count levels so too
// (gopher-lua's read the main chunk's locals at a tail call's level);
// debug.setmetatable returns true and debug.setfenv its object, refusing
// what has no environment. debug.getregistry is added (gopher-lua lacks
// it). newproxy shares only
// a metatable newproxy(true) made, and refuses any other argument.
//
// table.foreach, table.foreachi and table.setn are added: gopher-lua lacks
// them; setn fails as in the reference build ("'setn' is obsolete").
package lua51
