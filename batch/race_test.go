//go:build race

package batch_test

// raceEnabled says the tests run under the race detector, where each
// goroutine and memory access costs many times more: the heaviest cases
// shrink to sizes that still take the same paths, and the full sizes run
// without it.
const raceEnabled = true
