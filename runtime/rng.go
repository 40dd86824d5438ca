package runtime

import (
	cryptorand "crypto/rand"
	"encoding/binary"
)

// rng is the generator that unseeded Rand and RandN calls draw from: a
// call takes the counters from offset on, one an element, so that no two
// calls repeat each other. New seeds it afresh each run; Seed resets it.
//
// It has no lock of its own: like the rest of the runtime's Lua-facing
// state, only the goroutine that holds the runtime's entry touches it.
type rng struct {
	seed, offset uint64
}

// newRNG returns a generator seeded from the operating system's entropy,
// so that two runs, and two runtimes, draw different numbers.
func newRNG() rng {
	return rng{seed: freshSeed()}
}

// reset makes the draws after it repeat those after any other reset to
// the same seed.
func (g *rng) reset(seed uint64) {
	g.seed, g.offset = seed, 0
}

// start returns the seed and first counter of a draw: the given seed's
// own from counter 0, or, with none (nil), the generator's next ones.
func (g *rng) start(seed *uint64) (s, offset uint64) {
	if seed != nil {
		return *seed, 0
	}
	return g.seed, g.offset
}

// advance moves the generator past the n counters an unseeded draw took.
// Only a draw that succeeded advances it, so a failed one leaves the
// sequence as it was.
func (g *rng) advance(n uint64) {
	g.offset += n
}

// freshSeed seeds a new runtime's generator from the operating system's
// entropy, so that two runs, and two runtimes, draw different numbers.
func freshSeed() uint64 {
	var b [8]byte
	cryptorand.Read(b[:]) // never fails: crypto/rand ends the program instead
	return binary.LittleEndian.Uint64(b[:])
}
