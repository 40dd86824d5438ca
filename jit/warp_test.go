package jit

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

// warpSum is the warp-shuffle reduction of CUDA's and Numba's guides: each
// warp's sum in its first lane, then one atomic per warp.
const warpSum = `return function(total, sums, x)
	local i = kernels.grid(1)
	local v = 0
	if i <= #x then v = x[i] end
	local offset = math.floor(kernels.warpsize / 2)
	while offset >= 1 do
		v = v + kernels.shfl_down(v, offset)
		offset = math.floor(offset / 2)
	end
	if kernels.laneid() == 1 then
		sums[math.floor((i - 1) / 32) + 1] = v
		kernels.atomic_add(total, 1, v)
	end
end`

// A warp-shuffle sum gives each warp's sum, in the order of the shuffle
// tree, exactly as the lanes in step compute it; a tail of x shorter than
// the grid adds zeros.
func TestWarpShuffleSumMatchesTheTreeOnTheCPU(t *testing.T) {
	for _, d := range []device.DType{device.Int64, device.Float64, device.Float32} {
		t.Run(d.String(), func(t *testing.T) {
			src := warpSum
			if d.IsFloat() {
				src = strings.Replace(src, "local v = 0\n", "local v = 0.0\n", 1)
			}
			const n, threads = 1000, 1024
			r := rand.New(rand.NewSource(5))
			x := randomArray(r, d, n)
			got := runKernel(t, src, [3]int{4, 1, 1}, [3]int{256, 1, 1}, []any{zeros(d, 1), zeros(d, threads/32), x})
			want := make([]float64, threads/32)
			for w := range want {
				var lanes [32]float64
				for l := range lanes {
					if k := 32*w + l; k < n {
						lanes[l] = element(x, k)
					}
				}
				for off := 16; off >= 1; off /= 2 {
					for l := 0; l+off < 32; l++ { // lanes past 31-off add their own value; lane 1's sum never reads them
						lanes[l] += lanes[l+off]
						if d == device.Float32 {
							lanes[l] = f32(lanes[l])
						}
					}
				}
				want[w] = lanes[0]
			}
			for w, g := range values(got[1]) {
				if g != want[w] {
					t.Fatalf("warp %d sums to %v, want %v", w+1, g, want[w])
				}
			}
			total, sum := element(got[0], 0), 0.0
			for k := 0; k < n; k++ {
				sum += element(x, k)
			}
			if math.Abs(total-sum) > 1e-3*math.Max(1, math.Abs(sum)) {
				t.Errorf("the total is %v, want %v", total, sum)
			}
		})
	}
}

// shfl_xor's butterfly leaves every lane with the warp's maximum; laneid
// counts each block's threads x fastest, in warps of 32, from 1.
func TestShflXorAndLaneidFollowCUDA(t *testing.T) {
	got := runKernel(t, `return function(lanes, maxima, x)
		local tx, ty = kernels.grid(2)
		local i = (ty - 1) * 8 + tx
		lanes[i] = kernels.laneid()
		local v = x[i]
		local mask = 1
		while mask < kernels.warpsize do
			v = math.max(v, kernels.shfl_xor(v, mask))
			mask = mask * 2
		end
		maxima[i] = v
	end`, [3]int{1, 1, 1}, [3]int{8, 12, 1}, []any{zeros(device.Int64, 96), zeros(device.Float32, 96), randomArray(rand.New(rand.NewSource(6)), device.Float32, 96)})
	x := got[2]
	for i, l := range values(got[0]) {
		if l != float64(i%32+1) {
			t.Fatalf("thread %d has lane %v, want %d", i+1, l, i%32+1)
		}
	}
	for i, m := range values(got[1]) {
		want := math.Inf(-1)
		for k := i / 32 * 32; k < i/32*32+32; k++ {
			want = math.Max(want, element(x, k))
		}
		if m != want {
			t.Fatalf("thread %d has %v, want its warp's maximum %v", i+1, m, want)
		}
	}
}

// A source past the warp's 32 lanes (an offset of 32 or more, a negative
// one, a mask of 32 or more) gives a lane its own value, as on the GPU.
func TestShuffleSourcesPastTheWarpGiveTheLanesOwnValue(t *testing.T) {
	got := runKernel(t, `return function(out)
		local i = kernels.grid(1)
		local l = kernels.laneid()
		out[i][1] = kernels.shfl_down(l, 31)
		out[i][2] = kernels.shfl_down(l, 40)
		out[i][3] = kernels.shfl_down(l, -1)
		out[i][4] = kernels.shfl_xor(l, 33)
		out[i][5] = kernels.shfl_xor(l * 1.5, 31)
	end`, [3]int{1, 1, 1}, [3]int{32, 1, 1}, []any{zeros(device.Float64, 32, 5)})[0]
	for lane := 1; lane <= 32; lane++ {
		want := []float64{float64(lane), float64(lane), float64(lane), float64(lane), 1.5 * float64((lane-1)^31+1)}
		if lane == 1 {
			want[0] = 32
		}
		for k, w := range want {
			if g := element(got, (lane-1)*5+k); g != w {
				t.Errorf("lane %d, value %d: %v, want %v", lane, k+1, g, w)
			}
		}
	}
}

// The block reduction Numba's and CUDA's guides build from warps: each
// warp's sum into shared memory, a barrier, the first warp sums those.
func TestWarpSumsThenSyncthreadsGiveTheBlockSum(t *testing.T) {
	src := `return function(out, x)
		local s = kernels.shared(32, "float64")
		local i = kernels.grid(1)
		local lane = kernels.laneid()
		local w = math.floor((i - 1) % 256 / 32) + 1
		local v = x[i]
		for k = 0, 4 do v = v + kernels.shfl_down(v, 2 ^ k) end
		if lane == 1 then s[w] = v end
		kernels.syncthreads()
		if w == 1 then
			v = 0.0
			if lane <= 8 then v = s[lane] end
			v = v + kernels.shfl_xor(v, 1)
			v = v + kernels.shfl_xor(v, 2)
			v = v + kernels.shfl_xor(v, 4)
			kernels.syncwarp()
			if lane == 1 then out[math.floor((i - 1) / 256) + 1] = v end
		end
	end`
	_, err := translate(t, src, Signature{arr(device.Float64, 1), arr(device.Float64, 1)}, Options{})
	if err == nil || !strings.Contains(err.Error(), "kernels.shfl_down's second argument is a lane offset or mask, an integer, not float64") {
		t.Fatalf("a float offset: %v", err)
	}
	src = strings.Replace(src, "2 ^ k", "math.floor(2 ^ (4 - k))", 1)
	x := randomArray(rand.New(rand.NewSource(7)), device.Float64, 1024)
	got := runKernel(t, src, [3]int{4, 1, 1}, [3]int{256, 1, 1}, []any{zeros(device.Float64, 4), x})[0]
	for b := 0; b < 4; b++ {
		want := 0.0
		for k := 256 * b; k < 256*(b+1); k++ {
			want += element(x, k)
		}
		if g := element(got, b); math.Abs(g-want) > 1e-12 {
			t.Errorf("block %d sums to %v, want %v", b+1, g, want)
		}
	}
}

// Where CUDA leaves a shuffle undefined, the evaluator stops the launch
// with an error that says why: a source lane beyond a block's last,
// partial warp, a source lane that has returned, lanes at different warp
// operations.
func TestUndefinedShufflesAreErrorsOnTheCPU(t *testing.T) {
	cases := []struct {
		body  string
		block int
		want  string
	}{
		{`local v = kernels.shfl_down(kernels.laneid(), 16)`, 48,
			"kernel.lua:2: kernels.shfl_down: lane 1 reads lane 17, which is not in the block (a block of 48 threads leaves its last warp 16 lanes); CUDA leaves that value undefined"},
		{`if kernels.laneid() > 16 then return end
		local v = kernels.shfl_xor(1.5, 16)`, 32,
			"kernel.lua:3: kernels.shfl_xor: lane 1 reads lane 17, which has returned; CUDA leaves that value undefined"},
		{`local v = 0
		if kernels.laneid() <= 16 then v = kernels.shfl_down(v, 1) else v = kernels.shfl_xor(v, 1) end`, 64,
			"the lanes of a warp reached different warp operations (kernels.shfl_down at line 3 and kernels.shfl_xor at line 3)"},
		{`if kernels.laneid() == 3 then kernels.syncthreads() else kernels.syncwarp() end`, 32,
			"the lanes of a warp reached different warp operations (kernels.syncwarp at line 2 and kernels.syncthreads)"},
	}
	for _, c := range cases {
		p := mustTranslate(t, "return function(x)\n\t\t"+c.body+"\n\tend", Signature{arr(fl32, 1)}, Options{})
		err := Run(p, [3]int{2, 1, 1}, [3]int{c.block, 1, 1}, []any{zeros(fl32, 1)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.body, err, c.want)
		}
	}
}

func TestWarpMisuseIsRefusedNamingTheCall(t *testing.T) {
	cases := []struct{ src, want string }{
		{`return function(x) local a = kernels.syncwarp() end`, "kernels.syncwarp is a statement in a kernel; it has no value"},
		{`return function(x) kernels.laneid() end`, "the value of kernels.laneid is not used"},
		{`return function(x) x[1] = kernels.shfl_down(x[1]) end`, "kernels.shfl_down takes 2 arguments"},
		{`return function(x) x[1] = kernels.shfl_xor(x[1] > 0, 1) end`, "a number is expected, got boolean"},
		{`return function(x) kernels.warpsize = 16 end`, "cannot assign to kernels.warpsize"},
	}
	for _, c := range cases {
		_, err := translate(t, c.src, Signature{arr(fl32, 1)}, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.src, err, c.want)
		}
	}
}

func TestWarpPrimitivesTranslateToCUDAs(t *testing.T) {
	p := mustTranslate(t, `return function(x)
		local i = kernels.grid(1)
		local v = kernels.shfl_down(x[i], 16) + kernels.shfl_xor(x[i], kernels.warpsize - 1)
		kernels.syncwarp()
		x[i] = v + kernels.laneid()
	end`, Signature{arr(fl32, 1)}, Options{})
	containsAll(t, CUDA(p), []string{
		"(glua_shfl_down(p_x[(l0_i - 1)], (16LL)) + glua_shfl_xor(p_x[(l0_i - 1)], wrap_sub((32LL), (1LL))))",
		"__syncwarp();",
		"glua_laneid()",
	})
}
