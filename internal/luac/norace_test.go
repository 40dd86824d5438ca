//go:build !race

package luac

const raceEnabled = false
