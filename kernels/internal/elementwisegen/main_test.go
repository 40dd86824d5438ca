package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGeneratedLoopsMatchTheTable(t *testing.T) {
	dir := filepath.Join("..", "..")
	src, err := os.ReadFile(filepath.Join(dir, tableFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, loopsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("kernels/%s does not match the table in kernels/%s: run go generate ./kernels", loopsFile, tableFile)
	}
}

func TestTableMistakesAreNamed(t *testing.T) {
	for _, tc := range []struct{ entry, want string }{
		{`{Name: "Add", Arrays: 2, Go: func(y, x, a float64) float64 { return y }}`, "not a lower-case Lua name"},
		{`{Name: "add", Arrays: 2, Go: func(y, x, a float64) float64 { return y }}`, "CUDA must be a string literal naming y, x or a"},
		{`{Name: "add", Arrays: 2, CUDA: "1.0f", Go: func(y, x, a float64) float64 { return y }}`, "CUDA must be a string literal naming y, x or a"},
		{`{Name: "add", Arrays: 3, Go: func(y, x, a float64) float64 { return y }}`, "Arrays must be"},
		{`{Name: "add", Arrays: 2, Go: add}`, "Go must be a function literal"},
		{`{Name: "add", Arrays: 2, Go: func(y, x float64) float64 { return y }}`, "func(y, x, a float64) float64"},
		{`{"add", 2}`, "name their fields"},
		{`{Name: "div", Arrays: 2, Go: func(y, x, a float64) float64 { return y }, IntCUDA: "y"}`, "IntGo and IntCUDA go together"},
		{`{Name: "div", Arrays: 2, Go: func(y, x, a float64) float64 { return y }, IntGo: func(y, x, a int64) int64 { return y }}`, "IntGo and IntCUDA go together"},
		{`{Name: "div", Arrays: 2, Go: func(y, x, a float64) float64 { return y }, IntCUDA: "y", IntGo: div}`, "IntGo must be a function literal"},
		{`{Name: "div", Arrays: 2, Go: func(y, x, a float64) float64 { return y }, IntCUDA: "y", IntGo: func(y int64) int64 { return y }}`, "func(y, x, a int64) int64"},
	} {
		src := "package kernels\n\nvar elementwiseOps = []*ElementwiseOp{\n" + tc.entry + ",\n}\n"
		if _, err := generate([]byte(src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.entry, err, tc.want)
		}
	}
}

// A loop makes a NaN result the GPU's from the operands in the order the
// CUDA expression names them; a selecting entry's loop keeps its result.
func TestLoopsMendNaNsFromTheOperandsInCUDAsOrder(t *testing.T) {
	src := "package kernels\n\nvar elementwiseOps = []*ElementwiseOp{\n" +
		`{Name: "rsub", Arrays: 1, CUDA: "sub_rn(a, x)", Go: func(_, x, a float64) float64 { return a - x }},` + "\n" +
		`{Name: "axpy", Arrays: 2, CUDA: "add_rn(mul_rn(a, x), y)", Go: func(y, x, a float64) float64 { return float64(a*x) + y }},` + "\n" +
		`{Name: "maximum", Arrays: 2, Selects: true, CUDA: "(y >= x || y != y) ? y : x", Go: func(y, x, _ float64) float64 { return y }},` + "\n}\n"
	out, err := generate([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"r = arithNaN(a, xs[i])\n", "r = arithNaN(a, xs[i], ys[i])\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Count(got, "arithNaN") != 2 {
		t.Errorf("the selecting entry's loop mends NaNs:\n%s", got)
	}
}
