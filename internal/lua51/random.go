package lua51

import (
	"crypto/rand"
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// libcRand is the generator behind the C library's rand() in glibc (the
// additive feedback generator of random(3), degree 31, separation 3), so
// that math.randomseed(n) followed by math.random gives the numbers the
// reference lua5.1 gives on Linux. gopher-lua's math.randomseed calls Go's
// rand.Seed, which does nothing since Go 1.24, so a seeded script was not
// repeatable; and its generator is the process's, shared by every state.
type libcRand struct {
	state       [31]int32
	front, rear int
}

// seed is srand(seed).
func (g *libcRand) seed(seed uint32) {
	if seed == 0 {
		seed = 1
	}
	word := int32(seed)
	g.state[0] = word
	for i := 1; i < len(g.state); i++ {
		// 16807 * word % 2147483647 without overflowing 32 bits, as glibc
		// computes it (Schrage's method).
		hi, lo := word/127773, word%127773
		word = 16807*lo - 2836*hi
		if word < 0 {
			word += 2147483647
		}
		g.state[i] = word
	}
	g.front, g.rear = 3, 0
	for i := 0; i < 10*len(g.state); i++ {
		g.next()
	}
}

// next is rand(): a number in [0, 2^31-1].
func (g *libcRand) next() int32 {
	g.state[g.front] = int32(uint32(g.state[g.front]) + uint32(g.state[g.rear]))
	r := int32(uint32(g.state[g.front]) >> 1)
	g.front = (g.front + 1) % len(g.state)
	g.rear = (g.rear + 1) % len(g.state)
	return r
}

const randMax = 2147483647

// newRandom gives a state its own generator, seeded from the operating
// system, so that unseeded scripts differ from run to run (lua5.1's
// unseeded sequence is always srand(1)'s; glua keeps gopher-lua's varying
// one) and states in one process do not draw from one sequence.
func newRandom() *libcRand {
	var b [4]byte
	g := &libcRand{}
	if _, err := rand.Read(b[:]); err != nil {
		g.seed(1)
		return g
	}
	g.seed(binary.LittleEndian.Uint32(b[:]))
	return g
}

// random is math.random and math.randomseed over one state's generator.
type random struct{ g *libcRand }

// random is Lua 5.1's math.random: rand() is drawn before the arguments
// are checked, as there, so a failed call still moves the sequence on.
func (r random) random(L *lua.LState) int {
	x := float64(r.g.next()%randMax) / randMax
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(x))
	case 1:
		u := checkInt(L, 1)
		if u < 1 {
			argError(L, 1, "random", "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(x*float64(u)) + 1))
	case 2:
		l, u := checkInt(L, 1), checkInt(L, 2)
		if l > u {
			argError(L, 2, "random", "interval is empty")
		}
		// u-l+1 is a C int there, which wraps
		L.Push(lua.LNumber(math.Floor(x*float64(int32(u-l+1))) + float64(l)))
	default:
		raise(L, "wrong number of arguments")
	}
	return 1
}

func (r random) randomseed(L *lua.LState) int {
	r.g.seed(uint32(checkInt(L, 1)))
	return 0
}
