package runtime_test

import (
	"errors"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// A Go host that passes nil where the Go API needs a function or an
// array, a zero Array no runtime made, or another runtime's array, gets an
// error naming the call and the problem that wraps ErrBadArgument, not a
// panic, now or later; the runtime carries on.
func TestNilAndForeignArgumentsOfTheGoAPIAreErrors(t *testing.T) {
	rt, err := runtime.New(cpuOptions(runtime.Options{}, "64MiB"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	other, err := runtime.New(cpuOptions(runtime.Options{}, "64MiB"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	foreign, err := other.Zeros([]int{2}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		call func() error
		msg  string
	}{
		{func() error { return rt.Keep(nil) }, "glua: Keep: the *Array is nil"},
		{func() error { return rt.Keep(&runtime.Array{}) }, "glua: Keep: the Array was not made by a runtime (a zero Array)"},
		{func() error { return rt.Keep(foreign) }, "glua: Keep: the array belongs to another runtime"},
		{func() error { return rt.GiveToScript(nil) }, "glua: GiveToScript: the *Array is nil"},
		{func() error { return rt.GiveToScript(&runtime.Array{}) }, "glua: GiveToScript: the Array was not made by a runtime (a zero Array)"},
		{func() error { return rt.GiveToScript(foreign) }, "glua: GiveToScript: the array belongs to another runtime"},
		{func() error { return rt.Scope(nil) }, "glua: Scope: fn is nil"},
		{func() error { _, err := rt.Timer(nil); return err }, "glua: Timer: fn is nil"},
		{func() error { _, err := rt.Capture(nil); return err }, "glua: Capture: fn is nil"},
		{func() error { return rt.ReleaseWhenUnreachable(nil, func() error { return nil }) },
			"glua: ReleaseWhenUnreachable: the userdata and the release function must not be nil"},
		{func() error { return rt.ReleaseWhenUnreachable(rt.Lua().NewUserData(), nil) },
			"glua: ReleaseWhenUnreachable: the userdata and the release function must not be nil"},
	}
	for _, c := range cases {
		err := c.call()
		if err == nil || err.Error() != c.msg {
			t.Errorf("got %v, want %s", err, c.msg)
		} else if !errors.Is(err, runtime.ErrBadArgument) {
			t.Errorf("%v does not wrap ErrBadArgument", err)
		}
	}
	if (&runtime.Array{}).Runtime() != nil {
		t.Error("a zero Array has a runtime")
	}
	// An Array's own methods and the calls that take arrays refuse a nil
	// or zero Array the same way, without a panic.
	var none *runtime.Array
	zero := &runtime.Array{}
	for _, c := range []struct {
		call func() error
		msg  string
	}{
		{none.Free, "glua: Free: the *Array is nil"},
		{zero.Free, "glua: Free: the Array was not made by a runtime (a zero Array)"},
		{func() error { _, err := zero.CopyToHost(nil); return err }, "the Array was not made by a runtime (a zero Array)"},
		{func() error { _, err := zero.Clone(); return err }, "the Array was not made by a runtime (a zero Array)"},
		{func() error { _, err := zero.Float64s(); return err }, "the Array was not made by a runtime (a zero Array)"},
		{func() error { _, err := rt.Sum(zero); return err }, "x was not made by a runtime (a zero Array)"},
		{func() error { return rt.Add(zero, zero) }, "y was not made by a runtime (a zero Array)"},
		{func() error { _, err := rt.HostNeg(nil); return err }, "glua: HostNeg: x is nil"},
	} {
		if err := c.call(); err == nil || err.Error() != c.msg {
			t.Errorf("got %v, want %s", err, c.msg)
		}
	}
	if none.IsFreed() || zero.IsFreed() {
		t.Error("a nil or zero Array says it is freed")
	}
	// What was refused left nothing behind that fails later: the walk that
	// frees dropped arrays and releases resources runs cleanly.
	if err := rt.DoString(`collectgarbage(); x = 1 + 1`); err != nil {
		t.Fatal(err)
	}
	a, err := rt.Zeros([]int{2}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.GiveToScript(a); err != nil {
		t.Errorf("GiveToScript of the runtime's own array: %v", err)
	}
	if err := rt.Keep(a); err != nil {
		t.Errorf("Keep of the runtime's own array: %v", err)
	}
	if err := rt.Scope(func() ([]*runtime.Array, error) { return nil, nil }); err != nil {
		t.Errorf("Scope of a function: %v", err)
	}
}
