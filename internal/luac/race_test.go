//go:build race

package luac

// raceEnabled says the tests run under the race detector, which makes
// every memory access many times slower: the load-time test then checks
// that loading grows linearly but not how long it takes.
const raceEnabled = true
