// Package linktest holds tests of a program that links glua's runtime
// without its Lua modules and with the CPU backend only: what such a
// program sees must say what it lacks. Its test binary imports nothing
// else of glua's, which no other package's tests can promise.
package linktest
