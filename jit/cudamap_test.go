package jit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

// A map whose arrays share one element size has a second entry moving
// 16-byte vectors: each input loaded as vectors before the body runs per
// lane, one vector stored, then the tail of fewer than a vector's
// elements; both entries take the same parameters.
func TestMapOfOneElementSizeHasAVectorEntry(t *testing.T) {
	p, err := checkMap(t, `return function(a, x, y) return a * x + y end`,
		Signature{floatArg, arr(device.Float32, 1), arr(device.Float32, 1)}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if p.VectorEntry() != "glua_map_vec" {
		t.Fatalf("vector entry %q", p.VectorEntry())
	}
	src := CUDA(p)
	params := "(float* p_out, i64 p_out_n0, double l1_arg1, float* p_in2, i64 p_in2_n0, float* p_in3, i64 p_in3_n0)"
	containsAll(t, src, []string{
		`extern "C" __global__ void glua_map` + params,
		`extern "C" __global__ void glua_map_vec` + params,
		"const u32 glua_nv = (u32)(glua_n / 4);",
		fmt.Sprintf("union { v16 v; float e[4]; } glua_in2[%d];", kernels.VectorsPerThread),
		"glua_in2[glua_k].v = ((const v16*)p_in2)[glua_u];",
		"l0_i = (i64)glua_u * 4 + glua_j + 1;",
		"l3_x = glua_in2[glua_k].e[glua_j];",
		"glua_o.e[glua_j] = (float)(((l2_a * l3_x) + l4_y));",
		"((v16*)p_out)[glua_u] = glua_o.v;",
		"const u32 glua_u = glua_nv * 4 + (u32)blockIdx.x * (u32)blockDim.x + (u32)threadIdx.x;",
	})
	vec := src[strings.Index(src, "glua_map_vec("):]
	if strings.Count(vec, "p_out[(l0_i - 1)] =") != 2 {
		t.Errorf("the vector entry should store elements only in its two tails (u32 and i64):\n%s", vec)
	}
}

// Element sizes that differ (a float16 input, a float32 output) leave the
// map with its loop over elements only, whose loads still come first.
func TestMapOfMixedElementSizesHasOnlyTheElementLoop(t *testing.T) {
	p, err := checkMap(t, `return function(h, f) return h * f end`,
		Signature{arr(device.Float16, 1), arr(device.Float32, 1)}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	src := CUDA(p)
	if p.VectorEntry() != "" || strings.Contains(src, "glua_map_vec") || strings.Contains(src, "v16*)p_") {
		t.Fatalf("a map of 2- and 4-byte elements got a vector entry:\n%s", src)
	}
	containsAll(t, src, []string{
		fmt.Sprintf("u16 glua_in1[%d];", kernels.ElementsPerThread),
		"glua_in1[glua_k] = p_in1[glua_u];",
		"l1_h = f16_to_f32(glua_in1[glua_k]);",
		"p_out[(l0_i - 1)] = ",
	})
}

// One-byte elements move 16 to a vector; 8-byte ones 2.
func TestMapVectorLanesFollowTheElementSize(t *testing.T) {
	for _, c := range []struct {
		d    device.DType
		want string
	}{{device.Uint8, "union { v16 v; u8 e[16]; }"}, {device.Float64, "union { v16 v; double e[2]; }"},
		{device.BFloat16, "union { v16 v; u16 e[8]; }"}, {device.Int64, "union { v16 v; i64 e[2]; }"}} {
		p, err := checkMap(t, `return function(x) return x + 1 end`, Signature{arr(c.d, 1)}, c.d)
		if err != nil {
			t.Fatal(err)
		}
		containsAll(t, CUDA(p), []string{c.want})
	}
}

// Arrays past index32's bound take a loop with 64-bit indices in both
// entries, the same body as the 32-bit one's.
func TestMapKeeps64BitLoopsForHugeArrays(t *testing.T) {
	p, err := checkMap(t, axpbySrc, Signature{arr(device.Float32, 1), arr(device.Float32, 1)}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	src := CUDA(p)
	if n := strings.Count(src, "if (index32(glua_n)) {"); n != 2 {
		t.Errorf("%d choices of the index type, want one per entry", n)
	}
	containsAll(t, src, []string{
		fmt.Sprintf("for (i64 glua_b = units_first<%d, i64>(); glua_b < (i64)glua_n; glua_b += units_step<%d, i64>()) {",
			kernels.ElementsPerThread, kernels.ElementsPerThread),
		fmt.Sprintf("for (i64 glua_b = units_first<%d, i64>(); glua_b < glua_nv; glua_b += units_step<%d, i64>()) {",
			kernels.VectorsPerThread, kernels.VectorsPerThread),
		"const i64 glua_nv = (i64)(glua_n / 4);",
	})
}

// A trap inside the body records itself and ends the thread in every
// loop: the vector lanes, the element loop and the tail.
func TestMapTrapStopsEveryLoop(t *testing.T) {
	p, err := checkMap(t, `return function(x, y) return x % y end`,
		Signature{arr(device.Int32, 1), arr(device.Int32, 1)}, device.Int32)
	if err != nil {
		t.Fatal(err)
	}
	src := CUDA(p)
	vec := src[strings.Index(src, "glua_map_vec("):]
	scalar := src[strings.Index(src, "glua_map("):strings.Index(src, "glua_map_vec(")]
	for name, body := range map[string]string{"element": scalar, "vector": vec} {
		if !strings.Contains(body, "i64* glua_err)") {
			t.Errorf("the %s entry takes no error record", name)
		}
		// u32 and i64 loops; the vector entry's tails again
		want := map[string]int{"element": 2, "vector": 4}[name]
		if n := strings.Count(body, "lua_mod_checked(glua_err, glua_stop, 1, l1_x, l2_y));\n"); n != want {
			t.Errorf("the %s entry checks the divisor %d times, want %d", name, n, want)
		}
		if strings.Count(body, "if (glua_stop) return;") < 3*want {
			t.Errorf("the %s entry does not stop after a trap:\n%s", name, body)
		}
	}
	containsAll(t, vec, []string{"glua_o.e[glua_j] = (int)(lua_mod_checked(glua_err, glua_stop, 1, l1_x, l2_y));"})
}

// A launch compiles only the entry it runs: MapCUDA writes one entry with
// one index type, the vector entry only where the map has one.
func TestMapCUDAWritesOnlyTheEntryALaunchRuns(t *testing.T) {
	p, err := checkMap(t, `return function(a, x, y) return a * x + y end`,
		Signature{floatArg, arr(device.Float32, 1), arr(device.Float32, 1)}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vector, wide bool
		entry, ix    string
	}{
		{true, false, "glua_map_vec", "u32"},
		{true, true, "glua_map_vec", "i64"},
		{false, false, "glua_map", "u32"},
		{false, true, "glua_map", "i64"},
	} {
		src, entry := MapCUDA(p, c.vector, c.wide)
		other := map[string]string{"u32": "i64", "i64": "u32"}[c.ix]
		switch {
		case entry != c.entry:
			t.Errorf("vector=%v wide=%v: entry %q, want %q", c.vector, c.wide, entry, c.entry)
		case strings.Count(src, "__global__") != 1 || !strings.Contains(src, `__global__ void `+c.entry+"("):
			t.Errorf("vector=%v wide=%v: want the one entry %s:\n%s", c.vector, c.wide, c.entry, src)
		case strings.Contains(src, "index32(glua_n)") || !strings.Contains(src, "for ("+c.ix+" glua_b") || strings.Contains(src, "for ("+other+" glua_b"):
			t.Errorf("vector=%v wide=%v: want only %s loops:\n%s", c.vector, c.wide, c.ix, src)
		}
	}
	mixed, err := checkMap(t, `return function(h, f) return h * f end`,
		Signature{arr(device.Float16, 1), arr(device.Float32, 1)}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if _, entry := MapCUDA(mixed, true, false); entry != "glua_map" {
		t.Errorf("a map of mixed element sizes has no vector entry; MapCUDA gave %q", entry)
	}
}
