//go:build race

package bindings_test

// raceEnabled: the race detector slows walks of the Lua state past the
// point where they are spaced out, so bounds that assume cheap walks widen.
const raceEnabled = true
