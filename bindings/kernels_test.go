package bindings

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/jit"
	"github.com/gluaproject/glua/kernels"
	"github.com/gluaproject/glua/runtime"
)

// fakeKernels is a kernelsRuntime that records the calls it gets.
type fakeKernels struct {
	calls  []string
	matmul runtime.MatmulOptions
	err    error
}

func (f *fakeKernels) note(call string) error { f.calls = append(f.calls, call); return f.err }
func (f *fakeKernels) Fill(x *runtime.Array, v float64) error {
	return f.note("fill " + lua.LNumber(v).String())
}
func (f *fakeKernels) Elementwise(op *kernels.ElementwiseOp, y *runtime.Array, a float64, x *runtime.Array) error {
	if op.Scalar == "" {
		return f.note(op.Name)
	}
	return f.note(op.Name + " " + lua.LNumber(a).String())
}
func (f *fakeKernels) Copy(dst, src *runtime.Array) error     { return f.note("copy") }
func (f *fakeKernels) Sum(x *runtime.Array) (float64, error)  { return 6, f.note("sum") }
func (f *fakeKernels) Norm(x *runtime.Array) (float64, error) { return 2, f.note("norm") }
func (f *fakeKernels) MaxAbsDiff(x, y *runtime.Array) (float64, error) {
	return 0.5, f.note("max_abs_diff")
}
func (f *fakeKernels) Matmul(C, A, B *runtime.Array, o runtime.MatmulOptions) error {
	f.matmul = o
	return f.note("matmul")
}
func (f *fakeKernels) UserCUDA() error { return nil }
func (f *fakeKernels) Compile(source, entry string, options, signature []string) (*runtime.Kernel, error) {
	return nil, f.note("compile " + entry)
}
func (f *fakeKernels) JIT(tree *ast.FunctionExpr, chunk string, o jit.Options) (*runtime.JITKernel, error) {
	return nil, f.note("jit " + o.Name)
}
func (f *fakeKernels) Map(tree *ast.FunctionExpr, chunk string, out *runtime.Array, args []any) error {
	return f.note("map")
}
func (f *fakeKernels) MapReduce(tree *ast.FunctionExpr, chunk string, op runtime.ReduceOp, args []any) (float64, error) {
	return 0, f.note("map_reduce " + op.String())
}
func (f *fakeKernels) MapReduceAxis(tree *ast.FunctionExpr, chunk string, op runtime.ReduceOp, args []any, axis int, out *runtime.Array) (*runtime.Array, error) {
	return out, f.note(fmt.Sprintf("map_reduce %s axis %d", op, axis))
}
func (f *fakeKernels) GiveToScript(a *runtime.Array) error { return nil }
func (f *fakeKernels) KernelCacheStats() (int64, int64)    { return 3, 4 }

func kernelsState(t *testing.T, f *fakeKernels) *lua.LState {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	L.SetGlobal("kernels", L.SetFuncs(L.NewTable(), kernelsModule{f}.funcs()))
	for _, name := range []string{"x", "y", "z"} {
		ud := L.NewUserData()
		ud.Value = new(runtime.Array)
		L.SetGlobal(name, ud)
	}
	return L
}

func TestKernelsModuleConvertsArgumentsAndChains(t *testing.T) {
	f := &fakeKernels{}
	L := kernelsState(t, f)
	err := L.DoString(`
		assert(kernels.fill(x, 1.5) == x, "kernels return their first argument")
		kernels.scale(kernels.add(x, y), 2)
		kernels.axpy(y, -3, x)
		assert(kernels.sum(x) == 6 and kernels.norm(x) == 2 and kernels.max_abs_diff(x, y) == 0.5)
		kernels.matmul(z, x, y, {alpha = 2, beta = 1, trans_b = true, precision = "tf32"})
		local s = kernels.cache_stats()
		assert(s.compiles == 3 and s.cache_hits == 4)`)
	if err != nil {
		t.Fatal(err)
	}
	want := "fill 1.5,add,scale 2,axpy -3,sum,norm,max_abs_diff,matmul"
	if got := strings.Join(f.calls, ","); got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
	o := f.matmul
	if o.Alpha != 2 || o.Beta != 1 || o.TransA || !o.TransB || o.Precision != "tf32" {
		t.Errorf("matmul options %+v", o)
	}
}

func TestKernelsModuleNamesTheCallInErrors(t *testing.T) {
	f := &fakeKernels{err: errors.New("x is 2x3 but y is 3x2")}
	L := kernelsState(t, f)
	if err := L.DoString(`kernels.add(x, y)`); err == nil || !strings.Contains(err.Error(), "kernels.add: x is 2x3 but y is 3x2") {
		t.Errorf("runtime error: %v", err)
	}
	if err := L.DoString(`kernels.scale(x, "two")`); err == nil || !strings.Contains(err.Error(), "kernels.scale: bad argument #2 (factor must be a number, got string)") {
		t.Errorf("bad argument: %v", err)
	}
	if err := L.DoString(`kernels.sum({})`); err == nil || !strings.Contains(err.Error(), "kernels.sum: bad argument #1 (DeviceArray expected, got table)") {
		t.Errorf("not an array: %v", err)
	}
}

func TestKernelsModuleHasAFunctionPerElementwiseKernel(t *testing.T) {
	f := &fakeKernels{}
	L := kernelsState(t, f)
	var want []string
	for _, op := range kernels.ElementwiseOps() {
		name := "kernels." + op.Name
		args, last, note := []string{"x"}, 1, op.Name
		if op.Scalar != "" {
			args, last, note = append(args, "2"), 2, note+" 2"
			bad := fmt.Sprintf(`%s(x, "two", y)`, name)
			wantErr := fmt.Sprintf("%s: bad argument #2 (%s must be a number, got string)", name, op.Scalar)
			if err := L.DoString(bad); err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%s: %v, want %q", bad, err, wantErr)
			}
		}
		if op.Arrays == 2 {
			args, last = append(args, "y"), last+1
			bad := fmt.Sprintf("%s(%s, {})", name, strings.Join(args[:len(args)-1], ", "))
			wantErr := fmt.Sprintf("%s: bad argument #%d (DeviceArray expected, got table)", name, last)
			if err := L.DoString(bad); err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%s: %v, want %q", bad, err, wantErr)
			}
		}
		call := fmt.Sprintf("assert(%s(%s) == x)", name, strings.Join(args, ", "))
		if err := L.DoString(call); err != nil {
			t.Errorf("%s: %v", call, err)
		}
		want = append(want, note)
	}
	if got := strings.Join(f.calls, ","); got != strings.Join(want, ",") {
		t.Errorf("calls %s, want %s", got, strings.Join(want, ","))
	}
}
