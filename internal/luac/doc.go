// Package luac compiles Lua source for gopher-lua's virtual machine with
// glua's own code generator, in place of gopher-lua's compiler (lua.Compile),
// which miscompiles ordinary Lua 5.1: multiple assignment stored into a
// target before reading it (`a, b = b, a` printed `2 2`), `and`/`or`
// assigned to an existing local kept its old value or overwrote it too
// early, `a = (...)` panicked, a generic for whose iterator expression
// calls a computed function failed, its jump-to-jump threading read an
// already patched jump as a label number (wrong jumps, panics and hangs
// after an earlier loop), and it stopped at 200 registers.
//
// Source is read by this package's own Lua 5.1 parser (lex.go, parse.go,
// after llex.c and lparser.c), which builds the trees of gopher-lua's ast
// package that gopher-lua's parser builds, with lua5.1's syntax (goto is a
// name; `;;` and the ambiguous `f\n(g)` are errors), limits (200 locals
// and 60 upvalues a function, 200 syntax levels, so parsing is linear in
// the source), error messages word for word, and chunk names as
// luaO_chunkid shows them (ChunkID).
//
// codegen.go, codegen_expr.go and codegen_stmt.go then compile the syntax
// tree as Lua
// 5.1's lcode.c and lparser.c compile source: an expression is a
// descriptor that stays undischarged until its consumer says where the
// value goes, conditional jumps collect in lists patched once to their
// final targets (no jump is ever retargeted afterwards), and registers are
// taken and freed in stack order. The result is the *lua.FunctionProto
// gopher-lua's VM runs, with every field it and its debug library read
// (including the unexported string constants, set by offset:
// codegen_layout.go), and Lua 5.1's semantics:
//
//   - evaluation order: in `t[i], i = f(), g()` the targets' tables and
//     keys are evaluated first, then the values left to right, and the
//     stores happen right to left, with Lua 5.1's copy of a local that a
//     later target assigns (`a, a = 1, 2` leaves 1); `x = 2, f()` runs f
//     before storing x;
//   - `(f())` and `(...)` give one value; a call or `...` last in a list
//     gives all of its values; `return f(x)` is a tail call;
//   - each iteration of a loop has fresh locals, closed (OP_CLOSE) at the
//     end of the iteration and on break, so closures capture the value
//     of their own iteration;
//   - constant folding where Lua 5.1 folds (+, -, *, / and unary minus
//     on numerals, never to NaN or dividing by zero), except % and ^,
//     which the VM computes; constants are shared by value, so 0 and -0
//     share one, as in Lua 5.1;
//   - Lua 5.1's limits: 250 registers ("function or expression too
//     complex near '1'") and jumps of 131,071 instructions ("control
//     structure too long near 'end'"), each naming the token Lua 5.1's
//     parser holds when it fails (near.go), 200 locals and 60 upvalues a
//     function; constants past RK's 256 are loaded into registers;
//   - debug information as Lua 5.1 records it: a line per instruction,
//     each local's name and live range (startpc, endpc), upvalue names,
//     and the called name of each call for tracebacks.
//
// Where gopher-lua's VM differs from Lua 5.1's, the code is shaped for it:
// OP_VARARG clears the registers above its values, so it only writes where
// nothing live is above; OP_NEWTABLE takes its sizes as plain numbers;
// OP_SETLIST's batch number past 511 goes in the following word, as in Lua
// 5.1. Runs of moves become OP_MOVEN, as gopher-lua's compiler makes them.
//
// Beyond Lua 5.1: a function may have any number of constants (Lua 5.1
// stops at 262,143 with "constant table overflow"); past that, constants
// are kept in a table of their own and read with two OP_GETTABLEs.
//
// Compile errors (*CompileError) read as lua5.1's: `chunk:line: message`.
//
// Load, LoadString and LoadFile replace L.Load, L.LoadString and
// L.LoadFile; Install routes the Lua-visible loaders (loadstring, load,
// loadfile, dofile, require's file searcher) through the same parser and compiler.
// Load also records each function's syntax tree against its compiled
// prototype (trees.go), so that kernels.jit translates the text the user
// wrote; FunctionTree finds it from a *lua.LFunction.
//
// What this package does not do: it does not change how gopher-lua runs
// code (internal/lua51 mends library functions and protected calls), and
// it cannot fix chunks compiled elsewhere (by L.DoString, L.LoadString, or
// a loader a host saved before Install ran).
package luac
