package jit

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

func zeros(d device.DType, shape ...int) HostArray {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return HostArray{DType: d, Shape: shape, Data: make([]byte, n*d.Size())}
}

func values(a HostArray) []float64 {
	out := make([]float64, len(a.Data)/a.DType.Size())
	for i := range out {
		out[i] = element(a, i)
	}
	return out
}

// The threads of a launch run in parallel on the CPU as on the GPU: every
// atomic_add and atomic_sub must see a distinct old value, so the old
// values of n threads counting are exactly 0 to n-1 (n to 1 counting
// down) and the counter ends at n (0).
func TestAtomicAddAndSubReturnEachOldValueOnce(t *testing.T) {
	const n = 2000
	for _, d := range []device.DType{device.Int32, device.Int64, device.Float32, device.Float64} {
		for _, op := range []string{"add", "sub"} {
			t.Run(fmt.Sprintf("%s/%s", op, d), func(t *testing.T) {
				counter := zeros(d, 1)
				if op == "sub" {
					storeFloat(d, counter.Data, 0, n)
				}
				src := fmt.Sprintf(`return function(counter, olds)
					local i = kernels.grid(1)
					if i > #olds then return end
					local old = kernels.atomic_%s(counter, 1, 1)
					olds[i] = old
				end`, op)
				got := runKernel(t, src, [3]int{16, 1, 1}, [3]int{128, 1, 1}, []any{counter, zeros(device.Int64, n)})
				olds := values(got[1])
				sort.Float64s(olds)
				for k, v := range olds {
					want := float64(k)
					if op == "sub" {
						want = float64(k + 1)
					}
					if v != want {
						t.Fatalf("the %d-th smallest old value is %v, want %v", k+1, v, want)
					}
				}
				if want := map[string]float64{"add": n, "sub": 0}[op]; element(got[0], 0) != want {
					t.Errorf("the counter ends at %v, want %v", element(got[0], 0), want)
				}
			})
		}
	}
}

// atomic_max and atomic_min leave the largest (smallest) value; each old
// value is what the element held, so it never passes the result. Floats
// as Numba's: a NaN value leaves the element as it is.
func TestAtomicMaxAndMinKeepTheExtreme(t *testing.T) {
	const n = 3000
	for _, d := range []device.DType{device.Int32, device.Int64, device.Float32, device.Float64} {
		t.Run(d.String(), func(t *testing.T) {
			r := rand.New(rand.NewSource(4))
			x := zeros(d, n)
			lo, hi := math.Inf(1), math.Inf(-1)
			for i := 0; i < n; i++ {
				v := float64(r.Intn(2_000_000) - 1_000_000)
				if d.IsFloat() {
					v = float64(float32(r.NormFloat64() * 1e3))
				}
				if i%97 == 5 && d.IsFloat() {
					v = math.NaN()
				} else {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
				storeFloat(d, x.Data, i, v)
			}
			ext := zeros(d, 2)
			storeFloat(d, ext.Data, 0, -1e9)
			storeFloat(d, ext.Data, 1, 1e9)
			got := runKernel(t, `return function(ext, x, olds)
				local i = kernels.grid(1)
				if i > #x then return end
				local a = kernels.atomic_max(ext, 1, x[i])
				local b
				b = kernels.atomic_min(ext, 2, x[i])
				olds[i] = a - b
				kernels.atomic_max(ext, 1, x[i] - 1)
			end`, [3]int{24, 1, 1}, [3]int{128, 1, 1}, []any{ext, x, zeros(device.Float64, n)})
			if g := values(got[0]); g[0] != hi || g[1] != lo {
				t.Fatalf("max %v and min %v, want %v and %v", g[0], g[1], hi, lo)
			}
			for i, v := range values(got[2]) {
				if v > hi-lo {
					t.Fatalf("thread %d: an old max less an old min is %v, past the range %v", i+1, v, hi-lo)
				}
			}
		})
	}
}

func TestFloatAtomicMaxIgnoresNaNLikeNumba(t *testing.T) {
	ext := zeros(device.Float32, 3)
	storeFloat(device.Float32, ext.Data, 1, math.NaN())
	storeFloat(device.Float32, ext.Data, 2, 5)
	got := runKernel(t, `return function(ext, nan)
		local a = kernels.atomic_max(ext, 1, 2.5)
		local b = kernels.atomic_max(ext, 2, 7)
		local c = kernels.atomic_min(ext, 3, nan)
		local d = kernels.atomic_min(ext, 3, -0.0)
	end`, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []any{ext, math.NaN()})[0]
	if g := values(got); g[0] != 2.5 || g[1] == g[1] || g[2] != 0 {
		t.Errorf("max(0, 2.5), max(NaN, 7), min(min(5, NaN), -0) give %v, want 2.5, NaN, -0", g)
	}
}

// atomic_exch hands each thread the value the one before it left: the
// old values and the last one are the initial 0 and every thread's
// number, once each. atomic_cas lets one thread claim a slot, and makes a
// counter out of a compare-and-swap loop.
func TestAtomicExchAndCasAreIndivisible(t *testing.T) {
	const n = 1500
	for _, d := range []device.DType{device.Int32, device.Int64} {
		t.Run(d.String(), func(t *testing.T) {
			got := runKernel(t, `return function(slots, olds)
				local i = kernels.grid(1)
				if i > #olds then return end
				olds[i] = kernels.atomic_exch(slots, 1, i)
				if kernels.atomic_cas(slots, 2, 0, i) == 0 then kernels.atomic_add(slots, 3, 1) end
				local seen = 0 -- a first guess; the loop reads the element atomically
				while true do
					local old = kernels.atomic_cas(slots, 4, seen, seen + 1)
					if old == seen then break end
					seen = old
				end
			end`, [3]int{12, 1, 1}, [3]int{128, 1, 1}, []any{zeros(d, 4), zeros(device.Int64, n)})
			all := append(values(got[1]), element(got[0], 0))
			sort.Float64s(all)
			for k, v := range all {
				if v != float64(k) {
					t.Fatalf("old values and the last exchanged: the %d-th is %v, want %v", k+1, v, k)
				}
			}
			if claimed, owner := element(got[0], 2), element(got[0], 1); claimed != 1 || owner < 1 || owner > n {
				t.Errorf("%v threads claimed the slot, owner %v; want exactly one", claimed, owner)
			}
			if c := element(got[0], 3); c != n {
				t.Errorf("the compare-and-swap counter is %v, want %d", c, n)
			}
		})
	}
}

// Operands convert to the element's dtype as a store converts them:
// integers wrap into int32, floats saturate into integers.
func TestAtomicOperandsConvertAsAStore(t *testing.T) {
	got := runKernel(t, `return function(a, big, f)
		kernels.atomic_add(a, 1, big)
		kernels.atomic_exch(a, 2, f)
		local old = kernels.atomic_sub(a, 3, 1)
		a[4] = old
	end`, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []any{zeros(device.Int32, 4), float64(1<<32 + 5), 1e12 + 0.5})[0]
	if g := values(got); g[0] != 5 || g[1] != math.MaxInt32 || g[2] != -1 || g[3] != 0 {
		t.Errorf("got %v, want 5 (2^32 + 5 wrapped), 2147483647 (saturated), -1, 0", g)
	}
}

func TestAtomicMisuseIsRefusedNamingTheCall(t *testing.T) {
	cases := []struct {
		src  string
		sig  Signature
		want string
	}{
		{`return function(x) kernels.atomic_cas(x, 1, 0, 1) end`, Signature{arr(fl32, 1)},
			"kernel.lua:1: kernels.atomic_cas works on int32 and int64 arrays; x is float32"},
		{`return function(x) kernels.atomic_max(x, 1, 1) end`, Signature{arr(device.Uint8, 1)},
			"kernels.atomic_max works on float32, float64, int32 and int64 arrays; x is uint8"},
		{`return function(x) kernels.atomic_min(x, 1, 1) end`, Signature{arr(fl32, 2)},
			"kernels.atomic_min takes a 1-D array; x has 2 dimensions"},
		{`return function(x) x[2] = 2 * kernels.atomic_add(x, 1, 1) end`, Signature{arr(fl32, 1)},
			"kernels.atomic_add's old value can only be assigned, alone, to a local or an element (local old = kernels.atomic_add(...)) or be the left side of an if's comparison (if kernels.atomic_add(...) == v then), or the call be a statement"},
		{`return function(x) if 0 == kernels.atomic_add(x, 1, 1) then x[2] = 1 end end`, Signature{arr(fl32, 1)},
			"kernels.atomic_add's old value can only be"},
		{`return function(x) while kernels.atomic_add(x, 1, 1) > 0 do end end`, Signature{arr(fl32, 1)},
			"kernels.atomic_add's old value can only be"},
		{`return function(x) local a = 1 + kernels.atomic_exch(x, 1, 1) end`, Signature{arr(fl32, 1)},
			"kernels.atomic_exch's old value can only be assigned, alone,"},
		{`return function(x) local a, b = kernels.atomic_exch(x, 1, 1), 2 end`, Signature{arr(fl32, 1)},
			"kernels.atomic_exch's old value can only be assigned, alone,"},
		{`return function(x) kernels.atomic_sub(x, 1) end`, Signature{arr(fl32, 1)},
			"kernels.atomic_sub takes 3 arguments"},
		{`return function(x, n) n = kernels.atomic_add(x, 1, 1.5) end`, Signature{arr(fl32, 1), intArg},
			"n is an integer parameter (its argument is an integer) and cannot take a float32; copy it into a local first (local v = n)"},
	}
	for _, c := range cases {
		_, err := translate(t, c.src, c.sig, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.src, err, c.want)
		}
	}
}

// An atomic on the left of an if's comparison runs once, before the
// comparison, also in an elseif, whose atomic runs only when the
// conditions before it are false.
func TestAtomicComparedInAnIfRunsOnce(t *testing.T) {
	got := runKernel(t, `return function(c, x)
		local i = kernels.grid(1)
		if kernels.atomic_add(c, 1, 1) >= 10 then
			x[i] = 1
		elseif kernels.atomic_add(c, 2, 1) < c[3] then
			x[i] = 2
		else
			x[i] = 3
		end
	end`, [3]int{1, 1, 1}, [3]int{16, 1, 1}, []any{HostArray{DType: device.Int64, Shape: []int{3}, Data: []byte{
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0}}, zeros(device.Int32, 16)})
	if c := values(got[0]); c[0] != 16 || c[1] != 10 {
		t.Errorf("the counters are %v, want 16 (every thread) and 10 (the threads that found the first below 10)", c)
	}
	count := map[float64]int{}
	for _, v := range values(got[1]) {
		count[v]++
	}
	if count[1] != 6 || count[2] != 4 || count[3] != 6 {
		t.Errorf("threads per branch %v, want 6, 4 and 6", count)
	}
}

func TestAtomicsTranslateToThePreludesHelpers(t *testing.T) {
	p := mustTranslate(t, `return function(x, y)
		local old = kernels.atomic_max(x, 2, 1.5)
		kernels.atomic_cas(y, 1, 3, old)
	end`, Signature{arr(device.Float64, 1), arr(device.Int32, 1)}, Options{CheckBounds: true})
	containsAll(t, CUDA(p), []string{
		"{ l0__atomic_max_ = glua_atomic_max(&p_x[((2LL) - 1)], (double)((1.5e+00))); } else glua_stop = true;",
		"l1_old = l0__atomic_max_;",
		"glua_atomic_cas(&p_y[((1LL) - 1)], (int)((3LL)), sat_i32((double)(l1_old)));",
	})
}

func TestAtomicComparedInAnIfTranslatesBeforeTheIf(t *testing.T) {
	p := mustTranslate(t, `return function(lock, x)
		if kernels.atomic_cas(lock, 1, 0, 1) == 0 then x[1] = 1 end
	end`, Signature{arr(device.Int32, 1), arr(fl32, 1)}, Options{})
	containsAll(t, CUDA(p), []string{
		"l0__atomic_cas_ = glua_atomic_cas(&p_lock[((1LL) - 1)], (int)((0LL)), (int)((1LL)));\n    if ((l0__atomic_cas_ == (0LL))) {",
	})
}
