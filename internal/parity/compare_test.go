package parity

import (
	"strings"
	"testing"
)

// Transcripts agree where they differ only by rounding of the dtype in
// force, and disagree on a message, an integer or a float beyond it.
func TestTranscriptsAgreeWithinTheDtypesTolerance(t *testing.T) {
	for _, c := range []struct {
		want, got string
		agree     bool
	}{
		{"=== a\n30.277427434921\n", "=== a\n30.277431\n", true}, // float32 rounding
		{"=== a\n30.27\n", "=== a\n30.40\n", false},              // beyond float32's
		{"=== a\nDeviceArray<float64>[2] 16 B\n[1.0000000001, 2.]\n", "=== a\nDeviceArray<float64>[2] 16 B\n[1.0000000002, 2.]\n", true},
		{"=== a\nDeviceArray<float64>[2] 16 B\n[1.0001, 2.]\n", "=== a\nDeviceArray<float64>[2] 16 B\n[1.0002, 2.]\n", false},
		{"=== a\nDeviceArray<int32>[2] 8 B\n[1000000, 2]\n", "=== a\nDeviceArray<int32>[2] 8 B\n[1000001, 2]\n", false}, // integers exactly
		{"=== a\nallocations 15\n", "=== a\nallocations 16\n", false},
		{"=== a\nrel. error 0\n", "=== a\nrel. error 3.1e-07\n", true}, // float32's absolute tolerance
		{"=== a\nerror: x.lua:3: index 5 is out of bounds\n", "=== a\nerror: x.lua:3: index 5 is out of range\n", false},
		{"=== a\nerror: x.lua:3: boom\n", "=== a\nerror: x.lua:4: boom\n", false},
		{"=== a\nDeviceArray<float32>[2x2] 16 B\n", "=== a\nDeviceArray<float32>[2x3] 16 B\n", false}, // a shape is text
		{"=== a\nx\n", "=== a\nx\ny\n", false},
	} {
		diffs := Compare(c.want, c.got)
		if (len(diffs) == 0) != c.agree {
			t.Errorf("want %q, got %q: agree %v, want %v (%s)", c.want, c.got, len(diffs) == 0, c.agree, strings.Join(diffs, "; "))
		}
	}
}

// Timings, rates, addresses, the sign of a NaN and the strings a run
// names (its device, its temporary directory) are normalised away.
func TestNormaliseRemovesWhatRightlyDiffers(t *testing.T) {
	replace := map[string]string{"NVIDIA H100 80GB HBM3": "<device>", "/tmp/x1": "$TMPDIR"}
	a := Normalise("naive 4.565 ms/iter 24.8 GFLOP/s\n0.08\tms\ntable: 0xc0001 -nan\nNVIDIA H100 80GB HBM3 /tmp/x1/a.npy\n", replace)
	b := Normalise("naive 0.012 ms/iter 9000 GFLOP/s\n1.5\tms\ntable: 0xc0abc nan\n<device> $TMPDIR/a.npy\n", replace)
	if a != b {
		t.Fatalf("normalised transcripts differ:\n%s\n%s", a, b)
	}
	a = Normalise("matmul 96x96, cpu backend (CPU (2 threads))\nnaive               3.156        0.6           12\nfused is 0.05x in place\nkernels compiled: 0, found in the disk cache: 0\nLimits: soft none, hard none; strategy caching\nGraph (5 operations, 1 KiB held)\n", map[string]string{"CPU (2 threads)": "<device>"})
	b = Normalise("matmul 96x96, cuda backend (NVIDIA H100)\nnaive              13.156       10.6           12\nfused is 10.05x in place\nkernels compiled: 3, found in the disk cache: 0\nLimits: soft none, hard none; strategy none\nGraph (7 operations, 1 KiB held)\n", map[string]string{"NVIDIA H100": "<device>"})
	if a != b {
		t.Fatalf("normalised transcripts differ:\n%s\n%s", a, b)
	}
	launch := "batch.matmul: a product of tiles took 0.041 s to launch: on a process's first product of this shape, the CUDA driver loading cuBLAS's kernel for it\n"
	if a, b := Normalise("batch.matmul: bus traffic planned 1 MiB\n"+launch+"C = A·B in 0.2 s\n", nil), Normalise("batch.matmul: bus traffic planned 1 MiB\nC = A·B in 0.1 s\n", nil); a != b {
		t.Fatalf("the GPU's report of a kernel's first load was kept:\n%s\n%s", a, b)
	}
	if got := Normalise("allocations 15 in 3 steps\n", nil); got != "allocations 15 in 3 steps\n" {
		t.Fatalf("a count was normalised: %q", got)
	}
}
