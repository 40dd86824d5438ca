//go:build !race

package bindings_test

const raceEnabled = false
