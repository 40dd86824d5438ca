// Package batch moves work and data through the device in pieces that fit:
// the largest batch size that runs (FindSize) and row chunks of a host
// array (Chunks). It is built on the runtime's public Go API, so a Go
// program uses it without Lua; the Lua module batch (package bindings)
// wraps it.
package batch
