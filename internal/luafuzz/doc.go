// Package luafuzz is glua's differential fuzzer: it writes random,
// deterministic Lua 5.1 programs (Generate), runs each in lua5.1 and in
// glua's command as a user would (Runner), names how their outputs differ
// (Classify) and cuts a differing program down to the statements and
// expressions that keep the difference (Shrink).
//
// It owns no Lua behaviour: what it finds is fixed in internal/luac,
// internal/lua51 or gopher-lua's virtual machine. Its tests are the CI run
// of a fixed range of seeds, against the list of known differences in
// testdata/known.txt, and the long run (TestLong) described in
// docs/lua-compat.md.
package luafuzz
