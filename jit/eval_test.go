package jit

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/device"
)

// randomArray is an array of d with shape, filled with small random values
// (integers for integer dtypes) that every dtype holds exactly.
func randomArray(r *rand.Rand, d device.DType, shape ...int) HostArray {
	n := 1
	for _, s := range shape {
		n *= s
	}
	a := HostArray{DType: d, Shape: shape, Data: make([]byte, n*d.Size())}
	for i := 0; i < n; i++ {
		v := float64(r.Intn(201) - 100)
		if d.IsFloat() {
			v = float64(float32(r.Float64()*4 - 2))
		}
		storeFloat(d, a.Data, i, v)
	}
	return a
}

func clone(a HostArray) HostArray {
	return HostArray{DType: a.DType, Shape: a.Shape, Data: append([]byte(nil), a.Data...)}
}

func element(a HostArray, i int) float64 {
	f, n := load(a.DType, a.Data, i)
	if a.DType.IsFloat() {
		return f
	}
	return float64(n)
}

// luaReference runs the kernel as plain Lua, one thread after another, with
// arrays as Lua tables and kernels.grid giving the thread's index, and
// returns the arrays as the kernel left them, stored back into their dtype.
func luaReference(t *testing.T, src string, grid, block [3]int, args []any) []HostArray {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	var idx, size [3]int
	k := L.NewTable()
	L.SetField(k, "grid", L.NewFunction(func(L *lua.LState) int {
		for d := 0; d < L.CheckInt(1); d++ {
			L.Push(lua.LNumber(idx[d] + 1))
		}
		return L.CheckInt(1)
	}))
	L.SetField(k, "gridsize", L.NewFunction(func(L *lua.LState) int {
		for d := 0; d < L.CheckInt(1); d++ {
			L.Push(lua.LNumber(size[d]))
		}
		return L.CheckInt(1)
	}))
	L.SetGlobal("kernels", k)
	if err := L.DoString(`function kernels.atomic_add(A, i, v) A[i] = A[i] + v end`); err != nil {
		t.Fatal(err)
	}
	if err := L.DoString(src); err != nil {
		t.Fatal(err)
	}
	fn := L.Get(-1)
	largs := make([]lua.LValue, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case float64:
			largs[i] = lua.LNumber(v)
		case HostArray:
			largs[i] = toLua(L, v)
		}
	}
	for d := range size {
		size[d] = grid[d] * block[d]
	}
	for z := 0; z < size[2]; z++ {
		for y := 0; y < size[1]; y++ {
			for x := 0; x < size[0]; x++ {
				idx = [3]int{x, y, z}
				if err := L.CallByParam(lua.P{Fn: fn, Protect: true}, largs...); err != nil {
					t.Fatalf("reference: %v", err)
				}
			}
		}
	}
	out := make([]HostArray, len(args))
	for i, a := range args {
		if h, ok := a.(HostArray); ok {
			out[i] = fromLua(largs[i].(*lua.LTable), clone(h))
		}
	}
	return out
}

// toLua makes a 1-D or 2-D array a Lua table with a shape field.
func toLua(L *lua.LState, a HostArray) *lua.LTable {
	t := L.NewTable()
	shape := L.NewTable()
	for _, d := range a.Shape {
		shape.Append(lua.LNumber(d))
	}
	t.RawSetString("shape", shape)
	if len(a.Shape) == 1 {
		for i := 0; i < a.Shape[0]; i++ {
			t.RawSetInt(i+1, lua.LNumber(element(a, i)))
		}
		return t
	}
	for r := 0; r < a.Shape[0]; r++ {
		row := L.NewTable()
		for c := 0; c < a.Shape[1]; c++ {
			row.RawSetInt(c+1, lua.LNumber(element(a, r*a.Shape[1]+c)))
		}
		t.RawSetInt(r+1, row)
	}
	return t
}

func fromLua(t *lua.LTable, a HostArray) HostArray {
	get := func(i int) float64 {
		if len(a.Shape) == 1 {
			return float64(t.RawGetInt(i + 1).(lua.LNumber))
		}
		row := t.RawGetInt(i/a.Shape[1] + 1).(*lua.LTable)
		return float64(row.RawGetInt(i%a.Shape[1] + 1).(lua.LNumber))
	}
	for i := 0; i < len(a.Data)/a.DType.Size(); i++ {
		storeFloat(a.DType, a.Data, i, get(i))
	}
	return a
}

// runKernel translates src for args and runs it on the CPU evaluator.
func runKernel(t *testing.T, src string, grid, block [3]int, args []any) []HostArray {
	t.Helper()
	sig := make(Signature, len(args))
	run := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case float64:
			sig[i] = Arg{Float: v != math.Trunc(v)}
			run[i] = v
		case HostArray:
			sig[i] = arr(v.DType, len(v.Shape))
			run[i] = clone(v)
		}
	}
	p := mustTranslate(t, src, sig, Options{})
	if err := Run(p, grid, block, run); err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := make([]HostArray, len(args))
	for i, a := range run {
		if h, ok := a.(HostArray); ok {
			out[i] = h
		}
	}
	return out
}

// sameArrays compares the evaluator's arrays with the reference's: float32
// work within tol relative, the rest exactly.
func sameArrays(t *testing.T, got, want []HostArray, tol float64) {
	t.Helper()
	for k := range got {
		if got[k].Data == nil {
			continue
		}
		for i := 0; i < len(got[k].Data)/got[k].DType.Size(); i++ {
			g, w := element(got[k], i), element(want[k], i)
			if g != w && (tol == 0 || math.Abs(g-w) > tol*math.Max(1, math.Abs(w))) {
				t.Fatalf("argument %d element %d: the evaluator gives %v, plain Lua %v", k+1, i+1, g, w)
			}
		}
	}
}

var referenceKernels = []struct {
	name  string
	src   string
	args  func(r *rand.Rand, d device.DType) []any
	grid  [3]int
	block [3]int
	// float32Tol is the tolerance when the kernel computes in float32,
	// where plain Lua computes in float64.
	float32Tol float64
}{
	{
		name: "axpy with a bounds if",
		src: `return function(out, a, x, y, n)
			local i = kernels.grid(1)
			if i <= n then out[i] = a * x[i] + y[i] end
		end`,
		args: func(r *rand.Rand, d device.DType) []any {
			return []any{randomArray(r, d, 1000), 3.0, randomArray(r, d, 1000), randomArray(r, d, 1000), 1000.0}
		},
		grid: [3]int{8, 1, 1}, block: [3]int{128, 1, 1}, float32Tol: 1e-6,
	},
	{
		name: "loops, while, break and modulo",
		src: `return function(out, x)
			local i = kernels.grid(1)
			if i > #out then return end
			local s = 0
			for k = 1, 20 do
				if k % 3 == 0 or k % 7 == 1 then s = s + k end
			end
			local j = 0
			while true do
				j = j + 1
				if j >= i % 5 then break end
			end
			for k = 10, 1, -3 do s = s - k end
			out[i] = s + j + x[i] % 4 - math.max(x[i], 1) + math.min(2, x[i])
		end`,
		args: func(r *rand.Rand, d device.DType) []any {
			return []any{randomArray(r, d, 300), randomArray(r, d, 300)}
		},
		grid: [3]int{3, 1, 1}, block: [3]int{128, 1, 1}, float32Tol: 1e-5,
	},
	{
		name: "naive matmul with grid(2)",
		src: `return function(A, B, C)
			local row, col = kernels.grid(2)
			if row <= C.shape[1] and col <= C.shape[2] then
				local tmp = 0
				for k = 1, A.shape[2] do
					tmp = tmp + A[row][k] * B[k][col]
				end
				C[row][col] = tmp
			end
		end`,
		args: func(r *rand.Rand, d device.DType) []any {
			return []any{randomArray(r, d, 13, 7), randomArray(r, d, 7, 11), randomArray(r, d, 13, 11)}
		},
		grid: [3]int{2, 3, 1}, block: [3]int{8, 4, 1}, float32Tol: 1e-5,
	},
	{
		name: "reduction with atomic_add",
		src: `return function(total, x)
			local i = kernels.grid(1)
			local stride = kernels.gridsize(1)
			while i <= #x do
				kernels.atomic_add(total, 1, x[i])
				i = i + stride
			end
		end`,
		args: func(r *rand.Rand, d device.DType) []any {
			return []any{randomArray(r, d, 1), randomArray(r, d, 5000)}
		},
		grid: [3]int{4, 1, 1}, block: [3]int{64, 1, 1}, float32Tol: 1e-4,
	},
}

func TestEvaluatorAgreesWithPlainLua(t *testing.T) {
	for _, k := range referenceKernels {
		for _, d := range []device.DType{device.Float32, device.Float64, device.Int32, device.Int64} {
			t.Run(fmt.Sprintf("%s/%s", k.name, d), func(t *testing.T) {
				r := rand.New(rand.NewSource(1))
				args := k.args(r, d)
				src := k.src
				if d.IsFloat() {
					// an integer first value would make tmp an integer
					src = strings.Replace(src, "local tmp = 0\n", "local tmp = 0.0\n", 1)
				}
				got := runKernel(t, src, k.grid, k.block, args)
				want := luaReference(t, src, k.grid, k.block, args)
				tol := 0.0
				if d == device.Float32 {
					tol = k.float32Tol
				}
				if d == device.Float64 && strings.Contains(k.name, "atomic") {
					tol = 1e-12 // the order of the additions differs
				}
				sameArrays(t, got, want, tol)
			})
		}
	}
}

const blockSum = `return function(out, x)
	local s = kernels.shared(64, "float64")
	local i = kernels.grid(1)
	local lane = (i - 1) % 64 + 1
	s[lane] = 0.0
	if i <= #x then s[lane] = x[i] end
	kernels.syncthreads()
	local w = 32
	while w >= 1 do
		if lane <= w then s[lane] = s[lane] + s[lane + w] end
		kernels.syncthreads()
		w = math.floor(w / 2)
	end
	if lane == 1 then out[math.floor((i - 1) / 64) + 1] = s[1] end
end`

func TestSharedAndSyncthreadsSumEachBlock(t *testing.T) {
	src := blockSum
	r := rand.New(rand.NewSource(2))
	x := randomArray(r, device.Float64, 1000)
	out := HostArray{DType: device.Float64, Shape: []int{16}, Data: make([]byte, 16*8)}
	got := runKernel(t, src, [3]int{16, 1, 1}, [3]int{64, 1, 1}, []any{out, x})
	for b := 0; b < 16; b++ {
		want := 0.0
		for i := b * 64; i < min(1000, (b+1)*64); i++ {
			want += element(x, i)
		}
		if g := element(got[0], b); math.Abs(g-want) > 1e-9 {
			t.Errorf("block %d sums to %v, want %v", b+1, g, want)
		}
	}
}

func TestOutOfBoundsNamesArrayIndexAndShape(t *testing.T) {
	cases := []struct {
		src   string
		args  []any
		block [3]int
		want  string
	}{
		{`return function(x, n)
			local i = kernels.grid(1)
			x[i + n] = 1
		end`, []any{HostArray{DType: device.Float32, Shape: []int{10}, Data: make([]byte, 40)}, 5.0}, [3]int{8, 1, 1},
			"jit: kernel.lua:3: index x[11] is out of bounds: x has shape (10)"},
		{`return function(A)
			local r, c = kernels.grid(2)
			local v = A[r][c + 1]
		end`, []any{HostArray{DType: device.Int32, Shape: []int{2, 3}, Data: make([]byte, 24)}}, [3]int{2, 3, 1},
			"jit: kernel.lua:3: index A[1][4] is out of bounds: A has shape (2, 3)"},
	}
	for _, tc := range cases {
		sig := Signature{arr(tc.args[0].(HostArray).DType, len(tc.args[0].(HostArray).Shape))}
		if len(tc.args) > 1 {
			sig = append(sig, intArg)
		}
		p := mustTranslate(t, tc.src, sig, Options{})
		err := Run(p, [3]int{1, 1, 1}, tc.block, tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

func TestIntegerModuloByZeroIsAnErrorOnTheCPU(t *testing.T) {
	p := mustTranslate(t, `return function(x, n) x[1] = 5 % n end`, Signature{arr(device.Int64, 1), intArg}, Options{})
	err := Run(p, [3]int{1, 1, 1}, [3]int{1, 1, 1}, []any{HostArray{DType: device.Int64, Shape: []int{1}, Data: make([]byte, 8)}, 0.0})
	if err == nil || !strings.Contains(err.Error(), "kernel.lua:1: integer modulo by zero: the divisor of 5 % n is 0, in the kernel at kernel.lua:1") {
		t.Errorf("error %v", err)
	}
}

// A thread that returns before a barrier must not leave the others
// waiting for it.
func TestEarlyReturnDoesNotHangTheBarrier(t *testing.T) {
	p := mustTranslate(t, `return function(x)
		local i = kernels.grid(1)
		if i > 3 then return end
		kernels.syncthreads()
		x[i] = i
	end`, Signature{arr(device.Float32, 1)}, Options{})
	x := HostArray{DType: device.Float32, Shape: []int{3}, Data: make([]byte, 12)}
	if err := Run(p, [3]int{1, 1, 1}, [3]int{32, 1, 1}, []any{x}); err != nil {
		t.Fatal(err)
	}
	if element(x, 2) != 3 {
		t.Errorf("x[3] = %v", element(x, 2))
	}
}
