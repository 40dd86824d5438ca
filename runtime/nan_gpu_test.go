package runtime_test

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gluaproject/glua/runtime"
)

// Arithmetic that gives a NaN gives the GPU's bits on the CPU backend
// (kernels/nan.go): float32 and the 2-byte floats its one NaN, float64 an
// operand's, quieted, or the one made from numbers; selections keep their
// operand's. Every result of every pair of inputs, in every float dtype,
// has the same bits on both backends.
func TestGPUNaNsHaveTheSameBitsOnBothBackends(t *testing.T) {
	gpuNums, gpuNames := nanNumbers(t, newCUDA(t))
	cpuNums, cpuNames := nanNumbers(t, newCPU(t, runtime.Options{}))
	if len(gpuNums) != len(cpuNums) || strings.Join(gpuNames, ",") != strings.Join(cpuNames, ",") {
		t.Fatalf("the GPU gives %d results, the CPU backend %d", len(gpuNums), len(cpuNums))
	}
	nans, either, wrong := 0, 0, map[string][]string{}
	var order []string
	for i, g := range gpuNums {
		c, name := cpuNums[i], gpuNames[i]
		if g != g {
			nans++
		}
		if math.Float64bits(g) == math.Float64bits(c) {
			continue
		}
		if g == g && c == c && mathLibrary.MatchString(name) {
			continue // within the functions' documented error, tested elsewhere
		}
		if g != g && c != c && slices.Contains(nanChoices(name), math.Float64bits(g)) {
			either++
			continue
		}
		op := name[:strings.LastIndexByte(name, ' ')]
		if wrong[op] == nil {
			order = append(order, op)
		}
		wrong[op] = append(wrong[op], fmt.Sprintf("%s: GPU %#x, CPU %#x", name, math.Float64bits(g), math.Float64bits(c)))
	}
	for _, op := range order {
		w := wrong[op]
		t.Errorf("%s: %d results differ; %s", op, len(w), strings.Join(w[:min(len(w), 4)], "; "))
	}
	if nans < 1000 {
		t.Fatalf("only %d of %d results are NaN", nans, len(gpuNums))
	}
	t.Logf("%d results, %d NaN; %d float64 NaNs of two or more NaN operands differ, each one of them", len(gpuNums), nans, either)
}

// mathLibrary names the results of CUDA's math functions, which agree with
// Go's within a few ulps rather than bit for bit.
var mathLibrary = regexp.MustCompile(` map (sin|exp|log|pow|tanh|atan2) `)

// manyNaNs names the results that combine many elements.
var manyNaNs = regexp.MustCompile(`map_reduce|sum|norm|max_abs_diff|atomic_add|matmul`)

// nanChoices are the NaNs either backend may give for the float64 result
// name where two or more NaN operands meet: the GPU's compiler orders a
// sum's or a product's operands as it likes, and its float64 division
// and reductions take them in an order of their own, so either NaN
// (quieted) is right, as IEEE 754 allows. With one NaN operand, or none,
// there is one answer, and nanChoices is nil.
func nanChoices(name string) []uint64 {
	f := strings.Fields(name)
	if f[0] != "float64" {
		return nil
	}
	if manyNaNs.MatchString(name) {
		return quietNaNs()
	}
	k, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		return nil
	}
	n := len(nanInputs)
	x, y := math.Float64frombits(nanInputs[(k-1)/n]), math.Float64frombits(nanInputs[(k-1)%n])
	if x == x || y == y {
		return nil
	}
	return []uint64{math.Float64bits(x) | 0x8000000000000, math.Float64bits(y) | 0x8000000000000}
}
