package runtime_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// Row is a view: writing through it writes the array, on the host and on
// the device, and a row of a row is an element's row.
func TestRowIsAViewWithTheRemainingDimensions(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	h, err := runtime.HostArrayFromFloats(count(24), []int{2, 3, 4}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	row, err := h.Row(2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(row.Shape(), []int{3, 4}) || row.Floats()[0] != 13 {
		t.Fatalf("host row 2: %v %v", row.Shape(), row.Floats())
	}
	inner, err := row.Row(3)
	if err != nil {
		t.Fatal(err)
	}
	if err := inner.Set(1, -1); err != nil {
		t.Fatal(err)
	}
	if v, _ := h.Get(21); v != -1 {
		t.Errorf("writing h[2][3][2] through views: h's element 21 is %v", v)
	}
	d, err := rt.ToDevice(h)
	if err != nil {
		t.Fatal(err)
	}
	drow, err := d.Row(2)
	if err != nil {
		t.Fatal(err)
	}
	if !drow.IsView() || !slices.Equal(drow.Shape(), []int{3, 4}) {
		t.Fatalf("device row 2: view %v, shape %v", drow.IsView(), drow.Shape())
	}
	if err := drow.Set(0, 100); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Get(12); v != 100 || err != nil {
		t.Errorf("writing a device row's element 0: d's element 12 is %v, %v", v, err)
	}
	for _, tc := range []struct {
		i    int
		want string
	}{{0, "row 0 out of range: the array has rows 1 to 2"}, {3, "row 3 out of range"}} {
		if _, err := d.Row(tc.i); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Row(%d): %v, want %q", tc.i, err, tc.want)
		}
	}
	flat, _ := d.Reshape([]int{-1})
	if _, err := flat.Row(1); err == nil || !strings.Contains(err.Error(), "1-D array has no rows") {
		t.Errorf("Row of a 1-D array: %v", err)
	}
}

// Get and Set move one element, converted as the host's conversions
// convert it, for every dtype; indices out of range and freed arrays are
// errors, and leave the array as it was.
func TestDeviceElementsReadAndWriteOneAtATime(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.BFloat16, device.Int32, device.Int64, device.Uint8} {
		a, err := rt.Zeros([]int{2, 3}, dt)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Set(5, 2.75); err != nil {
			t.Fatal(err)
		}
		want, _ := runtime.HostArrayFromFloats([]float64{0, 0, 0, 0, 0, 2.75}, []int{2, 3}, dt)
		got, err := a.Float64s()
		if err != nil || !slices.Equal(got, want.Floats()) {
			t.Errorf("%s: after Set(5, 2.75) the array is %v, %v; want %v", dt, got, err, want.Floats())
		}
		if v, err := a.Get(5); err != nil || v != want.Floats()[5] {
			t.Errorf("%s: Get(5) = %v, %v", dt, v, err)
		}
		for _, i := range []int{-1, 6} {
			if _, err := a.Get(i); err == nil || !strings.Contains(err.Error(), "out of range [0, 6)") {
				t.Errorf("%s: Get(%d): %v", dt, i, err)
			}
			if err := a.Set(i, 1); err == nil {
				t.Errorf("%s: Set(%d) succeeded", dt, i)
			}
		}
		a.Free()
		if _, err := a.Get(0); !errors.Is(err, runtime.ErrFreed) {
			t.Errorf("%s: Get on a freed array: %v", dt, err)
		}
		if err := a.Set(0, 1); !errors.Is(err, runtime.ErrFreed) {
			t.Errorf("%s: Set on a freed array: %v", dt, err)
		}
	}
}
