// Package parity compares the transcripts of one script run on two
// backends: what it printed and the error it ended with, if any. The
// parity test beside it runs glua's conformance scripts, example scripts
// and documented examples on every backend and requires their transcripts
// to agree under the rules here, so that what passes on the CPU backend
// passes on the GPU.
//
// Two transcripts agree when, after Normalise, their lines agree one for
// one: the text between numbers identical, and each pair of numbers equal
// within the tolerance of the dtype in force (Tolerances), exactly where
// both read as integers and no floating-point dtype is in force.
//
// In CI, with no GPU, the test compares the cpu backend's transcripts with
// those committed in testdata/*.txt, recorded on a GPU. On a GPU machine,
//
//	GLUA_REQUIRE_CUDA=1 go test ./internal/parity -count=1
//
// compares the cuda backend, under each pool strategy, with the cpu
// backend, and then the cpu backend with the committed transcripts; with
// GLUA_PARITY_RECORD=1 added it writes the cuda backend's transcripts
// (under the caching strategy) into testdata instead of comparing the
// cpu backend with them, for review with git diff and commit.
package parity

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Tolerance bounds |a-b| by Abs + Rel·max(|a|,|b|).
type Tolerance struct{ Rel, Abs float64 }

// Tolerances are those of each floating-point dtype. A number is compared
// under the dtype last named in its item's transcript (an array's header
// names it: DeviceArray<float16>[4]); before any is named, float32's,
// the default dtype's. Float32 allows for sums and products the GPU
// accumulates in another order and for its fused multiply-adds; tf32 for
// the 10-bit mantissa of a tf32 product.
var Tolerances = map[string]Tolerance{
	"float64":  {Rel: 1e-9, Abs: 1e-12},
	"float32":  {Rel: 1e-4, Abs: 1e-6},
	"tf32":     {Rel: 5e-3, Abs: 1e-3},
	"float16":  {Rel: 1e-2, Abs: 1e-3},
	"bfloat16": {Rel: 2e-2, Abs: 1e-2},
}

// integerDtypes are the dtypes whose numbers are compared exactly.
var integerDtypes = map[string]bool{"int8": true, "int16": true, "int32": true, "int64": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "bool": true}

var dtypeName = regexp.MustCompile(`\b(float64|float32|tf32|float16|bfloat16|u?int(8|16|32|64)|bool)\b`)

// number is a decimal number standing alone: not part of a name (float32,
// x16), nor of a shape (2x2), which are text.
var number = regexp.MustCompile(`(^|[^A-Za-z0-9_.])(-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)($|[^A-Za-z0-9_])`)

// A Rule rewrites text that rightly differs between backends, or between
// runs, into a placeholder.
type Rule struct {
	Why  string
	re   *regexp.Regexp
	with string
}

// Rules are the normalisations, in the order Normalise applies them: a
// small set, each for text that describes the machine, the backend or the
// pool strategy rather than what the script computed.
var Rules = []Rule{
	{"timings and rates differ from run to run and between devices", regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?([ \t]?)(ns|µs|us|ms|s|GB/s|GiB/s|MB/s|GFLOP/s|TFLOP/s|it/s)\b`), "<n>$3$4"},
	{"speed ratios (0.92x, a speed-up) are timings", regexp.MustCompile(`\b[0-9]+\.[0-9]+x\b`), "<n>x"},
	{"scripts/matmul.lua's rows give ms/iter and GFLOP/s as bare columns", regexp.MustCompile(`(?m)^(naive|preallocated|in place)( +)[0-9.]+( +)[0-9.]+`), "$1$2<n>$3<n>"},
	{"addresses (tostring of a table or function, pointers) differ from run to run", regexp.MustCompile(`\b0x[0-9a-fA-F]+`), "0x<addr>"},
	{"the sign of 0/0 is the machine's", regexp.MustCompile(`-nan\b`), "nan"},
	{"scripts name the backend they ran on", regexp.MustCompile(`\b(cpu|cuda) backend\b|\((cpu|cuda)\)`), "<backend>"},
	{"pool.status(): the device's capacity and use", regexp.MustCompile(`(?m)^Effective .* memory usage: .*$`), "Effective <device> memory usage: <the device's>"},
	{"pool.status(): what the strategy reserves and caches", regexp.MustCompile(`\([^()]* reserved, [^()]* cached\)`), "(<the strategy's reserve>)"},
	{"pool.status(): the pool's use counts the cuBLAS workspace a GPU keeps (the arrays are still counted)", regexp.MustCompile(`(?m)^Memory pool usage: \S+ \S+ in `), "Memory pool usage: <bytes> in "},
	{"pool.status(): cuBLAS keeps a workspace on the GPU only", regexp.MustCompile(` and (a \S+ \S+ cuBLAS workspace|[0-9]+ cuBLAS workspaces \([^)]*\))`), ""},
	{"pool.status(): the strategy", regexp.MustCompile(`; strategy \w+`), "; strategy <strategy>"},
	{"pool.status(): the host's pinned limit", regexp.MustCompile(`(?m)^(Pinned host memory: .*; limit ).*$`), "$1<the host's>"},
	{"columns are as wide as their widest value, a timing's included", regexp.MustCompile(`[ \t]*<n>[ \t]*`), " <n> "},
	{"a graph's operations are the backend's nodes (a GPU graph may add its own)", regexp.MustCompile(`Graph \([0-9]+ operations?`), "Graph (<n> operations"},
	{"batch.matmul's verbose report names the driver's first load of a GPU kernel", regexp.MustCompile(`(?m)^batch\.matmul: a product of tiles took .* to launch: .*\n`), ""},
	{"the CPU backend's evaluator compiles no kernel", regexp.MustCompile(`kernels compiled: [0-9]+, found in the disk cache: [0-9]+`), "kernels compiled: <n>, found in the disk cache: <n>"},
}

// Normalise replaces each of the given backend-specific strings (the
// device's name, a run's temporary directory) with its placeholder, then
// applies Rules.
func Normalise(text string, replace map[string]string) string {
	for s, placeholder := range replace {
		if s != "" {
			text = strings.ReplaceAll(text, s, placeholder)
		}
	}
	for _, r := range Rules {
		text = r.re.ReplaceAllString(text, r.with)
	}
	return text
}

// Compare returns where got differs from want (both normalised), one line
// each, or nil when they agree. Lines starting "=== " begin an item, and
// reset the dtype in force.
func Compare(want, got string) []string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var diffs []string
	item, dtype := "", ""
	for i := range min(len(wl), len(gl)) {
		w, g := wl[i], gl[i]
		if strings.HasPrefix(w, "=== ") {
			item, dtype = w, ""
		}
		if msg := compareLine(w, g, &dtype); msg != "" {
			diffs = append(diffs, fmt.Sprintf("line %d (%s): %s\nwant: %s\ngot:  %s", i+1, strings.TrimPrefix(item, "=== "), msg, w, g))
			if len(diffs) >= 10 {
				return diffs
			}
		}
	}
	if len(wl) != len(gl) {
		diffs = append(diffs, fmt.Sprintf("%d lines, want %d", len(gl), len(wl)))
	}
	return diffs
}

func compareLine(w, g string, dtype *string) string {
	if w == g {
		noteDtype(w, dtype)
		return ""
	}
	wn, gn := number.FindAllStringSubmatchIndex(w, -1), number.FindAllStringSubmatchIndex(g, -1)
	if len(wn) != len(gn) {
		return "the text differs"
	}
	wp, gp := 0, 0
	for k := range wn {
		ws, we, gs, ge := wn[k][4], wn[k][5], gn[k][4], gn[k][5]
		if w[wp:ws] != g[gp:gs] {
			return "the text differs"
		}
		noteDtype(w[wp:ws], dtype)
		if msg := compareNumber(w[ws:we], g[gs:ge], *dtype); msg != "" {
			return msg
		}
		wp, gp = we, ge
	}
	if w[wp:] != g[gp:] {
		return "the text differs"
	}
	noteDtype(w[wp:], dtype)
	return ""
}

func noteDtype(text string, dtype *string) {
	if m := dtypeName.FindAllString(text, -1); len(m) > 0 {
		*dtype = m[len(m)-1]
	}
}

func compareNumber(w, g, dtype string) string {
	if w == g {
		return ""
	}
	_, tolerant := Tolerances[dtype]
	if integerDtypes[dtype] || (!tolerant && isInteger(w) && isInteger(g)) {
		return fmt.Sprintf("%s, want %s exactly (%s)", g, w, orDefault(dtype, "an integer"))
	}
	tol, ok := Tolerances[dtype]
	if !ok {
		tol, dtype = Tolerances["float32"], "float32"
	}
	a, errA := strconv.ParseFloat(w, 64)
	b, errB := strconv.ParseFloat(g, 64)
	if errA != nil || errB != nil {
		return "the text differs"
	}
	if math.Abs(a-b) > tol.Abs+tol.Rel*math.Max(math.Abs(a), math.Abs(b)) {
		return fmt.Sprintf("%s, want %s within %s's tolerance (rel %g, abs %g)", g, w, dtype, tol.Rel, tol.Abs)
	}
	return ""
}

func isInteger(s string) bool { return !strings.ContainsAny(s, ".eE") }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
