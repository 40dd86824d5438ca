package kernels

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

var floatDTypes = []device.DType{device.Float32, device.Float64, device.Float16, device.BFloat16}

func TestMix64IsSplitmix64(t *testing.T) {
	// The first outputs of Vigna's splitmix64 seeded with 0 (state advanced
	// by golden before each output), published with the generator.
	want := []uint64{0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F}
	for k, w := range want {
		if got := mix64(uint64(k+1) * golden); got != w {
			t.Fatalf("output %d = %#x, want %#x", k+1, got, w)
		}
	}
}

func TestRandFollowsTheDocumentedFormula(t *testing.T) {
	const n = 1000
	var seed, offset uint64 = 0x1234_5678_9abc, 1 << 40
	shifts := map[device.DType]uint{device.Float64: 11, device.Float32: 40, device.Float16: 53, device.BFloat16: 56}
	for _, dt := range floatDTypes {
		x := make([]byte, n*dt.Size())
		if err := Rand(dt, x, seed, offset); err != nil {
			t.Fatal(err)
		}
		bits := 64 - shifts[dt]
		for i := 0; i < n; i++ {
			h := mix64(seed*golden + offset + uint64(i))
			want := math.Ldexp(float64(h>>shifts[dt]), -int(bits))
			if got := device.Get(dt, x, i); got != want {
				t.Fatalf("%s element %d = %v, want %v", dt, i, got, want)
			}
		}
	}
}

func TestRandIsReproducibleAndSeedDependent(t *testing.T) {
	for _, dt := range floatDTypes {
		a, b, c := make([]byte, 4096*dt.Size()), make([]byte, 4096*dt.Size()), make([]byte, 4096*dt.Size())
		Rand(dt, a, 42, 0)
		Rand(dt, b, 42, 0)
		Rand(dt, c, 43, 0)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two fills with seed 42 differ", dt)
		}
		same := 0
		for i := 0; i < 4096; i++ {
			if device.Get(dt, a, i) == device.Get(dt, c, i) {
				same++
			}
		}
		// bfloat16 has only 256 values, so chance agreement is 1 in 256.
		if same > 4096/64 {
			t.Errorf("%s: seeds 42 and 43 agree on %d of 4096 elements", dt, same)
		}
	}
}

func TestRandIsUniformOnZeroToOne(t *testing.T) {
	const n = 200_000
	for _, dt := range floatDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			x := make([]byte, n*dt.Size())
			if err := Rand(dt, x, 7, 0); err != nil {
				t.Fatal(err)
			}
			var bins [10]int
			var sum float64
			for i := 0; i < n; i++ {
				v := device.Get(dt, x, i)
				if !(v >= 0 && v < 1) {
					t.Fatalf("element %d = %v, outside [0, 1)", i, v)
				}
				sum += v
				bins[int(v*10)]++
			}
			// The mean of n uniforms has standard deviation 0.29/sqrt(n),
			// about 0.00065; a 2-byte type's grid shifts it by half a step.
			if mean := sum / n; math.Abs(mean-0.5) > 0.005 {
				t.Errorf("mean = %v, want about 0.5", mean)
			}
			for i, c := range bins {
				if math.Abs(float64(c)-n/10) > 0.05*n/10 {
					t.Errorf("bin [%.1f, %.1f) holds %d of %d values", float64(i)/10, float64(i+1)/10, c, n)
				}
			}
		})
	}
}

func TestRandWorksOnAMisalignedBuffer(t *testing.T) {
	want := make([]byte, 100*4)
	Rand(device.Float32, want, 9, 0)
	buf := make([]byte, len(want)+1)
	if err := Rand(device.Float32, buf[1:], 9, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf[1:], want) {
		t.Fatal("Rand on a misaligned buffer differs from an aligned one")
	}
}

func TestRandRejectsIntegerDTypesAndPartialElements(t *testing.T) {
	for _, dt := range []device.DType{device.Int32, device.Int64, device.Uint8, device.Invalid} {
		err := Rand(dt, make([]byte, 8), 1, 0)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("rand: %s is not supported", dt)) {
			t.Errorf("Rand(%s) = %v, want a not-supported error", dt, err)
		}
	}
	if err := Rand(device.Float64, make([]byte, 12), 1, 0); err == nil || !strings.Contains(err.Error(), "whole number") {
		t.Errorf("Rand of 12 bytes as float64 = %v, want an error", err)
	}
}
