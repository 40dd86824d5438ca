package runtime

import (
	"reflect"
	"testing"

	"github.com/gluaproject/glua/device"
)

func TestKernelParametersAreReadFromTheDeclaration(t *testing.T) {
	src := `// a comment with __global__ void saxpy(int wrong)
extern "C" __global__ void __launch_bounds__(256) saxpy(float *__restrict__ y, const float a,
    const float* x, unsigned long long n, double d, void *anything, unsigned short *half_bits) {}`
	decls, err := declaredParams(src, "saxpy")
	if err != nil {
		t.Fatal(err)
	}
	want := []Param{
		{Kind: ParamPointer, DType: device.Float32},
		{Kind: ParamFloat32},
		{Kind: ParamPointer, DType: device.Float32},
		{Kind: ParamUint64},
		{Kind: ParamFloat64},
		{Kind: ParamPointer},
		{Kind: ParamPointer},
	}
	if len(decls) != len(want) {
		t.Fatalf("got %d parameters %q", len(decls), decls)
	}
	for i, d := range decls {
		p, err := parseParam(d)
		if err != nil {
			t.Fatal(err)
		}
		p.Decl = ""
		if !reflect.DeepEqual(p, want[i]) {
			t.Errorf("parameter %d %q: got %+v, want %+v", i+1, d, p, want[i])
		}
	}
	if _, err := parseParam("struct S s"); err == nil {
		t.Error("a struct parameter should be refused with a message")
	}
	if _, err := declaredParams(src, "other"); err == nil {
		t.Error("a missing entry should be an error")
	}
}

func TestLaunchArgumentsAreConvertedToTheDeclaredType(t *testing.T) {
	k := &Kernel{}
	for _, c := range []struct {
		kind ParamKind
		in   float64
		want any
		ok   bool
	}{
		{ParamFloat32, 2.5, float32(2.5), true},
		{ParamInt32, 7, int32(7), true},
		{ParamInt32, 7.5, nil, false},
		{ParamInt32, 1 << 40, nil, false},
		{ParamUint32, -1, nil, false},
		{ParamInt64, -3, int64(-3), true},
		{ParamUint64, 1 << 40, uint64(1 << 40), true},
	} {
		got, err := k.convert(Param{Kind: c.kind}, c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("kind %d, %v: got %v (%T), %v", c.kind, c.in, got, got, err)
		}
	}
}
