package runtime_test

import (
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// Repr puts the elements beneath the header; of a large device array it
// shows the corners, read from the right places in device memory.
func TestReprShowsTheElementsBeneathTheHeader(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	small, err := runtime.HostArrayFromFloats(count(4), []int{2, 2}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	want := "HostArray<float32>[2x2] 16 B\n[[1., 2.],\n [3., 4.]]"
	if got, err := small.Repr(); err != nil || got != want {
		t.Errorf("host:\n%s\nwant\n%s", got, want)
	}
	large, err := runtime.HostArrayFromFloats(count(2000*300), []int{2000, 300}, device.Int32)
	if err != nil {
		t.Fatal(err)
	}
	d, err := rt.ToDevice(large)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Repr()
	if err != nil {
		t.Fatal(err)
	}
	want = `DeviceArray<int32>[2000x300] 2.3 MiB
[[     1,      2,      3, ...,    298,    299,    300],
 [   301,    302,    303, ...,    598,    599,    600],
 [   601,    602,    603, ...,    898,    899,    900],
 ...,
 [599101, 599102, 599103, ..., 599398, 599399, 599400],
 [599401, 599402, 599403, ..., 599698, 599699, 599700],
 [599701, 599702, 599703, ..., 599998, 599999, 600000]]`
	if got != want {
		t.Errorf("device:\n%s\nwant\n%s", got, want)
	}
	if got, err := large.Repr(); err != nil || !strings.HasSuffix(got, want[strings.IndexByte(want, '\n'):]) {
		t.Errorf("the host array is written otherwise:\n%s", got)
	}
	rows, err := d.Rows(2, 5)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rows.Repr(); err != nil || !strings.HasPrefix(got, "DeviceArray<int32>[4x300] 4.7 KiB\n[[ 301,  302,  303, ...,  598,  599,  600],") ||
		!strings.HasSuffix(got, "\n [1201, 1202, 1203, ..., 1498, 1499, 1500]]") {
		t.Errorf("a view shows its own elements: %q, %v", got, err)
	}
	if err := d.Free(); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Repr(); err != nil || got != "DeviceArray<int32>[2000x300] 2.3 MiB (freed)" {
		t.Errorf("freed: %q, %v", got, err)
	}
}
