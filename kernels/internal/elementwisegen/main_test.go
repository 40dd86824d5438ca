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
