// Package luac compiles Lua source for gopher-lua with these corrections:
// multiple assignment (below), table constructors (tables.go: items past
// the 25,550th lost, a keyed field after 50 items overwriting them, and
// compile time quadratic in a function's constants), loops whose body
// starts with a jump (jumps.go: `for k in pairs(t) do break end` after
// another loop jumped back into that loop), and expressions compiled into
// registers they must not use (temps.go): `and`/`or` or `(...)` assigned to
// an existing local (`w = t.k and 1` kept w's old value when t.k was
// false; `x = (v or 1) and x` overwrote x before reading it; `a = (...)`
// panicked), and a generic for whose iterator expression calls a computed
// function (`for _, d in mod().iter(s)`, `for c in (a .. b):gmatch(p)`).
// Each of these is rewritten through fresh locals as below; the shapes
// gopher-lua compiles correctly (`pairs(t)`, `obj:iter()`, `and`/`or` into
// a global, upvalue or field) are left as they are and cost nothing.
//
// gopher-lua (every release up to at least v1.1.2; upstream issues #158,
// #315, #440) compiles `a, b = b, a` by storing into `a` before `b`'s
// right-hand side has been read, so a swap prints `2 2` where Lua 5.1 prints
// `2 1`; the same happens when a table key or prefix on the left names a
// variable assigned earlier in the statement (`t[i], i = 20, 30`), and with
// one target and several values (`x = 2, f()`) x is stored before f runs.
//
// Source is read by this package's own Lua 5.1 parser (lex.go, parse.go,
// after llex.c and lparser.c), which builds the trees of gopher-lua's ast
// package that gopher-lua's parser builds, with lua5.1's syntax (goto is a
// name; `;;` and the ambiguous `f\n(g)` are errors), limits (200 locals
// and 60 upvalues a function, 200 syntax levels, so parsing is linear in
// the source), error messages word for word, and chunk names as
// luaO_chunkid shows them (ChunkID).
//
// The fix works on the syntax tree, between the parser and gopher-lua's
// compiler, without touching gopher-lua itself. Every assignment with more
// than one target or more than one value becomes
//
//	do
//	  local (assign 1), ..., (assign n) = <left prefixes and keys>, <right-hand side>
//	  <last target> = (assign n)
//	  ...
//	  <first target> = (assign k+1)
//	end
//
// The temporaries' names contain a space and parentheses, which the lexer can
// never produce, so they cannot capture or shadow a user's variable (the
// compiler itself names its for-loop state the same way, "(for index)"). The
// final assignments each have one target and read only temporaries, so they
// do not go through the miscompiled path at all. Each new node carries the
// line of the user's code it stands for, so error positions and tracebacks
// are unchanged.
//
// Semantics follow Lua 5.1: left-hand prefixes and keys are evaluated first,
// left to right, then the right-hand side, left to right, with the usual
// adjustment (the last expression expands if it is a call or `...`, surplus
// values are evaluated and dropped, missing ones are nil); the stores then
// happen right to left, as in the reference implementation, so
// `a, a = 1, 2` leaves a == 1.
//
// Load, LoadString and LoadFile replace L.Load, L.LoadString and L.LoadFile;
// Install routes the Lua-visible loaders (loadstring, load, loadfile, dofile,
// require's file searcher) through the same parser and compiler.
//
// Limits, all measured against gopher-lua v1.1.2:
//   - each target costs one extra register for the statement's duration, so
//     one statement can assign at most 100 locals of a function (Lua 5.1
//     allows 125; gopher-lua's limit is 200 registers a function); past that
//     the chunk fails to compile with a syntax *lua.ApiError;
//   - prefixes and keys on the left are copied before the right-hand side
//     runs. The reference implementation reads a local used as a table or key
//     in place, so a function on the right that changes that local through an
//     upvalue moves the store there but not here (the manual leaves this
//     order undefined);
//   - debug.getlocal, called from a metamethod during the stores, sees the
//     temporaries;
//   - a generic for rewritten as above holds its three evaluated values in
//     three more registers while it runs, and `and`/`or` into a local
//     costs one register move; both count against the 200 registers of a
//     function;
//   - a function with more than 4,096 literals runs parts of itself in
//     functions of their own (tables.go); error levels and
//     debug.getinfo skip their frames when internal/lua51 is open, but
//     debug.traceback lists them, and gopher-lua's own error, without
//     internal/lua51, counts them as levels;
//   - compiling costs about 10-20% more time and allocation on code with a
//     multiple assignment every few lines (BenchmarkLoadString against
//     BenchmarkGopherLuaLoadString); running costs one register move per
//     value.
//
// Load also records each function's syntax tree against its compiled
// prototype (trees.go), so that kernels.jit translates the text the user
// wrote; FunctionTree finds it from a *lua.LFunction.
//
// What this package does not do: it does not change how gopher-lua runs
// code (internal/lua51 mends library functions and protected calls), and it cannot fix chunks compiled elsewhere (by L.DoString,
// L.LoadString, or a loader a host saved before Install ran).
package luac
