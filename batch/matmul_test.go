package batch_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"regexp"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// product is A·B in float64 on the host, the reference. It reads and
// writes only slices of its own caller's goroutine, so the race detector
// is told to leave it alone (go:norace): instrumented, its billion
// multiply-adds took most of the batch tests' time under -race.
//
//go:norace
func product(a, b []float64, m, k, n int) []float64 {
	c := make([]float64, m*n)
	for i := range m {
		for p := range k {
			for j := range n {
				c[i*n+j] += a[i*k+p] * b[p*n+j]
			}
		}
	}
	return c
}

func randomMatrix(t *testing.T, rt *runtime.Runtime, r, c int, dt runtime.DType) *runtime.HostArray {
	t.Helper()
	h, err := rt.NewHostArray([]int{r, c}, dt, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Size() {
		h.Set(i, rand.Float64()*2-1)
	}
	return h
}

// Odd and non-square shapes, every float dtype, budgets from "everything
// fits" down to smaller than one row of tiles: the product is the
// in-core one within the dtype's tolerance, with C's tiles coming down
// whole and in blocks of rows.
func TestMatmulByTilesEqualsTheProduct(t *testing.T) {
	t.Run("whole tiles", func(t *testing.T) {
		testMatmulByTiles(t, runtime.Float64, runtime.Float32, runtime.Float16, runtime.BFloat16)
	})
	// Which rows come down when does not depend on the dtype.
	t.Run("tiles in blocks", func(t *testing.T) {
		defer batch.SplitEveryTile()()
		testMatmulByTiles(t, runtime.Float64, runtime.Float32)
	})
	t.Run("panels of B in pieces", func(t *testing.T) {
		defer batch.PanelsInPieces(2)()
		testMatmulByTiles(t, runtime.Float64, runtime.Float32)
	})
}

func testMatmulByTiles(t *testing.T, dtypes ...runtime.DType) {
	rt := newRuntime(t, "")
	tolerance := map[runtime.DType]float64{runtime.Float64: 1e-12, runtime.Float32: 1e-5, runtime.Float16: 2e-2, runtime.BFloat16: 2e-2}
	shapes := [][3]int{{37, 53, 29}, {64, 64, 64}, {1, 97, 5}, {45, 1, 33}}
	if raceEnabled {
		// The smallest budgets cut C into 1x1 tiles, each over k panels:
		// 262144 steps for 64x64x64, a minute each under the race detector.
		shapes = [][3]int{{13, 17, 11}, {16, 16, 16}, {1, 97, 5}, {45, 1, 33}}
	}
	for _, dt := range dtypes {
		for _, shape := range shapes {
			m, k, n := shape[0], shape[1], shape[2]
			A, B := randomMatrix(t, rt, m, k, dt), randomMatrix(t, rt, k, n, dt)
			want := product(A.Floats(), B.Floats(), m, k, n)
			norm := 0.0
			for _, v := range want {
				norm = math.Max(norm, math.Abs(v))
			}
			size := uint64(dt.Size())
			for _, budget := range []uint64{0, size * uint64(5*m*k+5*k*n), size * 3000, size * 200, size * 20, size * 5} {
				if budget == size*5 && m*k*n > 100000 {
					// 1x1 tiles of 64x64x64 are 262,144 steps, 6 s a dtype
					// on a 2-core machine; 37x53x29's 56,869 cover them.
					continue
				}
				var plan bytes.Buffer
				C, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Budget: budget, Verbose: &plan})
				if err != nil {
					t.Fatalf("%s %v budget %d: %v", dt, shape, budget, err)
				}
				for i, v := range C.Floats() {
					if math.Abs(v-want[i]) > tolerance[dt]*math.Max(1, norm)*float64(k) {
						t.Fatalf("%s %v budget %d (%s): element %d is %v, want %v", dt, shape, budget, plan.String(), i, v, want[i])
					}
				}
				if !strings.HasPrefix(plan.String(), "batch.matmul: ") {
					t.Fatalf("plan %q", plan.String())
				}
				checkTraffic(t, plan.String(), m, k, n, dt.Size())
			}
			if live := rt.LiveArrays(); live != 0 {
				t.Fatalf("%d arrays live after the products", live)
			}
		}
	}
}

// A product large enough that its pages are asked for ahead, band by band
// as its rows of tiles land, is the product.
func TestMatmulPagedAheadEqualsTheProduct(t *testing.T) {
	rt := newRuntime(t, "")
	const m, k, n = 2100, 64, 2100 // C is 17 MiB, in five rows of tiles
	A, B := randomMatrix(t, rt, m, k, runtime.Float32), randomMatrix(t, rt, k, n, runtime.Float32)
	want := product(A.Floats(), B.Floats(), m, k, n)
	var plan bytes.Buffer
	C, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Budget: 5500000, Verbose: &plan})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.String(), "in 5 tiles of C of 420x2100") {
		t.Fatalf("the plan is not five rows of whole-row tiles: %s", plan.String())
	}
	for i, v := range C.Floats() {
		if math.Abs(v-want[i]) > 1e-5*float64(k) {
			t.Fatalf("element %d is %v, want %v", i, v, want[i])
		}
	}
}

func TestMatmulRefusesWhatCannotWork(t *testing.T) {
	rt := newRuntime(t, "")
	A, B := randomMatrix(t, rt, 4, 3, runtime.Float32), randomMatrix(t, rt, 5, 2, runtime.Float32)
	vector, _ := rt.NewHostArray([]int{4}, runtime.Float32, false)
	ints, _ := rt.NewHostArray([]int{3, 2}, runtime.Int32, false)
	for what, want := range map[string]struct {
		a, b   *runtime.HostArray
		budget uint64
		err    string
	}{
		"inner dimensions": {A, B, 0, "inner dimensions 3 and 5 differ"},
		"not a matrix":     {A, vector, 0, "must be matrices"},
		"integers":         {A, ints, 0, "one float dtype"},
		"tiny budget":      {A, randomMatrix(t, rt, 3, 2, runtime.Float32), 16, "the smallest that works is 20 B"},
	} {
		_, err := batch.Matmul(rt, want.a, want.b, batch.MatmulOptions{Budget: want.budget})
		if err == nil || !strings.Contains(err.Error(), want.err) {
			t.Errorf("%s: %v, want an error containing %q", what, err, want.err)
		}
	}
	if live := rt.LiveArrays(); live != 0 {
		t.Fatalf("%d arrays live after the refusals", live)
	}
}

// An out that shares memory with A or B, wholly or in part, is refused
// before anything is computed, as kernels.matmul refuses its C: the tiles
// would land over elements still to be read.
func TestMatmulRefusesAnOutThatSharesMemoryWithAnOperand(t *testing.T) {
	rt := newRuntime(t, "")
	big := randomMatrix(t, rt, 12, 4, runtime.Float32)
	rows := func(i, j int) *runtime.HostArray {
		v, err := big.Rows(i, j)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := big.Floats()
	for what, c := range map[string]struct {
		a, b, out *runtime.HostArray
		err       string
	}{
		"out is A":             {rows(1, 4), rows(5, 8), rows(1, 4), "out shares memory with A"},
		"out overlaps A":       {rows(1, 4), rows(9, 12), rows(3, 6), "out shares memory with A"},
		"out overlaps B":       {rows(9, 12), rows(1, 4), rows(2, 5), "out shares memory with B"},
		"out meets B in a row": {rows(9, 12), rows(1, 4), rows(4, 7), "out shares memory with B"},
	} {
		_, err := batch.Matmul(rt, c.a, c.b, batch.MatmulOptions{Out: c.out})
		if err == nil || !strings.Contains(err.Error(), c.err+"; write the product into a separate array") {
			t.Errorf("%s: %v, want an error containing %q", what, err, c.err)
		}
	}
	if !slices.Equal(big.Floats(), before) {
		t.Error("a refused product changed its arrays")
	}
	out, err := batch.Matmul(rt, rows(1, 4), rows(5, 8), batch.MatmulOptions{Out: rows(9, 12)})
	if err != nil {
		t.Fatalf("out beside A and B in one array: %v", err)
	}
	want := product(before[:16], before[16:32], 4, 4, 4)
	for i, v := range out.Floats() {
		if math.Abs(v-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("out beside A and B: element %d is %v, want %v", i, v, want[i])
		}
	}
}

// When C's tiles span whole rows and there are several rows of them, B is
// read from pinned memory: from B itself when it is pinned, else from a
// pinned copy made during the first row. Both give the product, with B's
// last panel short, and leave no pinned memory in use.
func TestMatmulReadsBFromPinnedMemory(t *testing.T) {
	rt := newRuntime(t, "")
	const m, k, n = 300, 1100, 9 // 1100 = two 512-deep panels and a short one
	A := randomMatrix(t, rt, m, k, runtime.Float32)
	pageable := randomMatrix(t, rt, k, n, runtime.Float32)
	pinned, err := rt.NewHostArray([]int{k, n}, runtime.Float32, true)
	if err != nil {
		t.Fatal(err)
	}
	copy(pinned.Bytes(), pageable.Bytes())
	want := product(A.Floats(), pageable.Floats(), m, k, n)
	before, _, _ := rt.PinnedStats()
	for name, B := range map[string]*runtime.HostArray{"pageable": pageable, "pinned": pinned} {
		var plan bytes.Buffer
		// room for C's tile of 70 whole rows and the panels: five rows of
		// tiles, evened to 60 rows each
		budget := uint64(4 * (70*n + 2*(70*512+512*n)))
		C, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Budget: budget, Verbose: &plan})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(plan.String(), "in 5 tiles of C of 60x9") {
			t.Fatalf("%s: the plan is not five rows of whole-row tiles: %s", name, plan.String())
		}
		if from := map[string]string{"pageable": "read from a pinned copy", "pinned": "read from its own pinned memory"}[name]; !strings.Contains(plan.String(), "; B is "+from) {
			t.Fatalf("%s: verbose does not say B is read from %s: %s", name, from, plan.String())
		}
		for i, v := range C.Floats() {
			if math.Abs(v-want[i]) > 1e-5*float64(k) {
				t.Fatalf("%s: element %d is %v, want %v", name, i, v, want[i])
			}
		}
		if live, _, _ := rt.PinnedStats(); live != before {
			t.Fatalf("%s: %d bytes of pinned memory live after the product, want the %d of pinned B", name, live, before)
		}
	}
}

// A product whose result the host limit cannot hold, though its tiles fit,
// is that limit's error, found while the tiles are under way; nothing is
// left live and the next product that fits runs.
func TestMatmulResultOverTheHostLimit(t *testing.T) {
	c := config.Default()
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: "cpu", CPUMemory: "1GiB", HostMemoryLimit: "200KiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	const m, k, n = 256, 8, 256 // C is 256 KiB; its tiles of 64 rows 64 KiB
	A, B := randomMatrix(t, rt, m, k, runtime.Float32), randomMatrix(t, rt, k, n, runtime.Float32)
	var plan bytes.Buffer
	budget := uint64(4 * (64*n + 2*(64*k+k*n)))
	_, err = batch.Matmul(rt, A, B, batch.MatmulOptions{Budget: budget, Verbose: &plan})
	if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), "out of host memory") {
		t.Fatalf("%v, want the host limit's error", err)
	}
	if !strings.Contains(plan.String(), "in 4 tiles of C of 64x256") {
		t.Fatalf("the tiles were not planned to fit: %s", plan.String())
	}
	if live := rt.LiveArrays(); live != 0 {
		t.Fatalf("%d arrays live after the refusal", live)
	}
	small := randomMatrix(t, rt, 16, k, runtime.Float32)
	C, err := batch.Matmul(rt, small, B, batch.MatmulOptions{})
	if err != nil {
		t.Fatalf("the product that fits: %v", err)
	}
	want := product(small.Floats(), B.Floats(), 16, k, n)
	for i, v := range C.Floats() {
		if math.Abs(v-want[i]) > 1e-5*k {
			t.Fatalf("element %d is %v, want %v", i, v, want[i])
		}
	}
}

// A product with a zero dimension is NumPy's: A of 0x3 by B of 3x4 is a
// 0x4 array, and A of 2x0 by B of 0x2 a 2x2 of zeros, into out too
// (which is zeroed, whatever it held); out of another shape and an
// unknown precision are still errors.
func TestMatmulWithAZeroDimensionIsNumPys(t *testing.T) {
	testEmptyProducts(t, newRuntime(t, ""))
}

func testEmptyProducts(t *testing.T, rt *runtime.Runtime) {
	t.Helper()
	for _, c := range [][3]int{{0, 3, 4}, {2, 0, 2}, {2, 3, 0}, {0, 0, 0}, {0, 2, 0}, {3, 0, 0}, {0, 0, 5}} {
		m, k, n := c[0], c[1], c[2]
		for _, dt := range []runtime.DType{runtime.Float32, runtime.Float64} {
			A, B := randomMatrix(t, rt, m, k, dt), randomMatrix(t, rt, k, n, dt)
			var plan bytes.Buffer
			C, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Verbose: &plan})
			if err != nil {
				t.Fatalf("%dx%d · %dx%d %s: %v", m, k, k, n, dt, err)
			}
			checkZeros(t, C, m, n, dt)
			if want := "multiplies nothing"; !strings.Contains(plan.String(), want) {
				t.Errorf("%dx%d · %dx%d: the plan %q does not say it %s", m, k, k, n, plan.String(), want)
			}
			out, err := rt.NewHostArray([]int{m, n}, dt, false)
			if err != nil {
				t.Fatal(err)
			}
			for i := range out.Size() {
				out.Set(i, 7)
			}
			got, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Out: out})
			if err != nil {
				t.Fatalf("%dx%d · %dx%d %s into out: %v", m, k, k, n, dt, err)
			}
			if got != out {
				t.Fatalf("%dx%d · %dx%d: the product is not out", m, k, k, n)
			}
			checkZeros(t, out, m, n, dt)
			wrong, _ := rt.NewHostArray([]int{m + 1, n}, dt, false)
			if _, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Out: wrong}); err == nil || !strings.Contains(err.Error(), "out must be") {
				t.Errorf("%dx%d · %dx%d into an out of %v: got %v, want an error about out's shape", m, k, k, n, wrong.Shape(), err)
			}
			if _, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Precision: "fp8"}); err == nil || !strings.Contains(err.Error(), `unknown precision "fp8"`) {
				t.Errorf("%dx%d · %dx%d with precision fp8: got %v, want the unknown precision's error", m, k, k, n, err)
			}
		}
	}
	if n := rt.Stats().LiveBlocks; n != 0 {
		t.Errorf("%d device arrays left live", n)
	}
}

func checkZeros(t *testing.T, C *runtime.HostArray, m, n int, dt runtime.DType) {
	t.Helper()
	if s := C.Shape(); len(s) != 2 || s[0] != m || s[1] != n || C.DType() != dt {
		t.Fatalf("the product is %v %s, want %dx%d %s", s, C.DType(), m, n, dt)
	}
	for i, v := range C.Floats() {
		if v != 0 {
			t.Fatalf("%dx%d product: element %d is %v, want 0", m, n, i, v)
		}
	}
}

// checkTraffic checks verbose's account of the bus: what the tiles moved
// is what the plan predicted (A once for each column of tiles, B once for
// each row of them, C once), and C's share is all of C.
func checkTraffic(t *testing.T, plan string, m, k, n, size int) {
	t.Helper()
	r := regexp.MustCompile(`bus traffic planned (\S+ \S+) up \(A (\S+ \S+), B (\S+ \S+)\) and (\S+ \S+) down; moved (\S+ \S+) up \(A (\S+ \S+), B (\S+ \S+)\) and (\S+ \S+) down in \S+ s, \S+ GB/s on average`)
	f := r.FindStringSubmatch(plan)
	if f == nil {
		t.Fatalf("verbose does not account for the bus traffic: %q", plan)
	}
	if f[1] != f[5] || f[2] != f[6] || f[3] != f[7] || f[4] != f[8] {
		t.Fatalf("the tiles moved other than the plan predicted: %q", plan)
	}
	if want := config.FormatSize(uint64(m * n * size)); f[4] != want {
		t.Fatalf("C came down as %s, want all of it, %s: %q", f[4], want, plan)
	}
}

// B downloaded from the device into a new array is page-locked where it
// lies when there are several rows of tiles to read it again, rather
// than copied into new pinned memory: the product is right, B stays
// locked while it lives (a second product then locks nothing more), and
// no pinned copy of it is left over.
func TestMatmulPinsADownloadedBInPlace(t *testing.T) {
	t.Run("cpu", func(t *testing.T) { testMatmulPinsBInPlace(t, newRuntime(t, "")) })
	t.Run("cuda", func(t *testing.T) { testMatmulPinsBInPlace(t, newCUDA(t)) })
}

func testMatmulPinsBInPlace(t *testing.T, rt *runtime.Runtime) {
	const m, k, n = 192, 1100, 1000 // B is 4.2 MiB: a download's new array is mapped memory
	A, hostB := randomMatrix(t, rt, m, k, runtime.Float32), randomMatrix(t, rt, k, n, runtime.Float32)
	dB, err := rt.DeviceArray([]int{k, n}, runtime.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if err := dB.CopyFrom(hostB); err != nil {
		t.Fatal(err)
	}
	B, err := dB.CopyToHost(nil)
	dB.Free()
	if err != nil {
		t.Fatal(err)
	}
	want := product(A.Floats(), B.Floats(), m, k, n)
	before, _, _ := rt.PinnedStats()
	budget := uint64(4 * (64*n + 2*(64*512+512*n))) // three rows of tiles of 64 whole rows
	for call := range 2 {
		var plan bytes.Buffer
		C, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Budget: budget, Verbose: &plan})
		if err != nil {
			t.Fatalf("call %d: %v", call, err)
		}
		if !strings.Contains(plan.String(), "in 3 tiles of C of 64x1000") {
			t.Fatalf("call %d: the plan is not three rows of whole-row tiles: %s", call, plan.String())
		}
		if !strings.Contains(plan.String(), "; B is read where it lies, page-locked in place") {
			t.Fatalf("call %d: verbose does not say B is read in place: %s", call, plan.String())
		}
		checkTraffic(t, plan.String(), m, k, n, 4)
		for i, v := range C.Floats() {
			if math.Abs(v-want[i]) > 1e-5*float64(k) {
				t.Fatalf("call %d: element %d is %v, want %v", call, i, v, want[i])
			}
		}
		live, _, _ := rt.PinnedStats()
		if live < before+uint64(B.NBytes()) || live >= before+2*uint64(B.NBytes()) {
			t.Fatalf("call %d: %d bytes of pinned memory live after the product, want B's %d locked in place beside the %d before, and no copy",
				call, live, B.NBytes(), before)
		}
	}
	goruntime.KeepAlive(B)
}

// A downloaded from the device into a new array is page-locked where it
// lies, a row of tiles at a time, and its panels go up as blocks of it:
// with C's tiles spanning whole rows (B locked too) and with square tiles
// (A's blocks from several columns of tiles), the product is right and
// verbose says A is read in place.
func TestMatmulReadsADownloadedAInPlace(t *testing.T) {
	t.Run("cpu", func(t *testing.T) { testMatmulReadsAInPlace(t, newRuntime(t, "")) })
	t.Run("cuda", func(t *testing.T) { testMatmulReadsAInPlace(t, newCUDA(t)) })
}

func testMatmulReadsAInPlace(t *testing.T, rt *runtime.Runtime) {
	const m, k, n = 1024, 1100, 1000 // A and B over 4 MiB: downloads' arrays are mapped memory
	download := func(h *runtime.HostArray) *runtime.HostArray { return downloaded(t, rt, h) }
	hA, hB := randomMatrix(t, rt, m, k, runtime.Float32), randomMatrix(t, rt, k, n, runtime.Float32)
	want := product(hA.Floats(), hB.Floats(), m, k, n)
	for _, c := range []struct {
		name   string
		budget uint64
		plan   string
	}{
		{"whole rows", uint64(4 * (256*n + 2*(256*512+512*n))), "in 4 tiles of C of 256x1000"},
		{"squares", 4 << 20, "tiles of C of"},
	} {
		// fresh downloads: an A locked for another plan's rows of tiles
		// is read through staging
		A, B := download(hA), download(hB)
		var plan bytes.Buffer
		C, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Budget: c.budget, Verbose: &plan})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(plan.String(), c.plan) || !strings.Contains(plan.String(), "A is read where it lies, page-locked in place") {
			t.Fatalf("%s: the plan or where A is read from is not as expected: %s", c.name, plan.String())
		}
		checkTraffic(t, plan.String(), m, k, n, 4)
		for i, v := range C.Floats() {
			if math.Abs(v-want[i]) > 1e-5*float64(k) {
				t.Fatalf("%s: element %d is %v, want %v", c.name, i, v, want[i])
			}
		}
	}
}

// With B's panels in pieces of columns, C's tile held piece by piece, the
// product is right whether B is pageable (a pinned copy made during the
// first row of tiles, each piece then a block of it), pinned, or, with
// A, a download's array page-locked in place; and the tiles move what
// the plan says: A once, B once for each row of tiles.
func TestMatmulWithBsPanelsInPieces(t *testing.T) {
	t.Run("cpu", func(t *testing.T) { testMatmulInPieces(t, newRuntime(t, "")) })
	t.Run("cuda", func(t *testing.T) { testMatmulInPieces(t, newCUDA(t)) })
}

// m, k and n for the products that page-lock C in place: C, A and B over
// stagedMin (4 MiB), so that new results and downloads are mapped memory.
const bigM, bigK, bigN = 1024, 1100, 1100

func testMatmulInPieces(t *testing.T, rt *runtime.Runtime) {
	defer batch.PanelsInPieces(2)()
	const m, k, n = bigM, bigK, bigN
	hA, hB := randomMatrix(t, rt, m, k, runtime.Float32), randomMatrix(t, rt, k, n, runtime.Float32)
	want := inCore(t, rt, hA, hB)
	pinned, err := rt.NewHostArray([]int{k, n}, runtime.Float32, true)
	if err != nil {
		t.Fatal(err)
	}
	copy(pinned.Bytes(), hB.Bytes())
	budget := uint64(4 * (256*n + 2*(256*512+512*n/2))) // four rows of tiles of 256 whole rows
	for _, c := range []struct {
		name  string
		A, B  *runtime.HostArray
		where string
	}{
		{"pageable", hA, hB, "B is read from a pinned copy"},
		{"pinned", hA, pinned, "B is read from its own pinned memory"},
		{"downloaded", downloaded(t, rt, hA), downloaded(t, rt, hB), "A is read where it lies, page-locked in place while it lives; B is read where it lies"},
	} {
		var plan bytes.Buffer
		C, err := batch.Matmul(rt, c.A, c.B, batch.MatmulOptions{Budget: budget, Verbose: &plan})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(plan.String(), "in 4 tiles of C of 256x1100, each over 3 panels of A 256x512 and B 512x1100 in 2 pieces of 512x550") {
			t.Fatalf("%s: the plan is not four rows of tiles over panels in two pieces: %s", c.name, plan.String())
		}
		if !strings.Contains(plan.String(), c.where) {
			t.Fatalf("%s: verbose does not say %q: %s", c.name, c.where, plan.String())
		}
		checkTraffic(t, plan.String(), m, k, n, 4)
		checkProduct(t, c.name, C, want, k)
	}
	if live := rt.LiveArrays(); live != 0 {
		t.Fatalf("%d arrays live after the products", live)
	}
}

func checkProduct(t *testing.T, name string, C *runtime.HostArray, want []float64, k int) {
	t.Helper()
	for i, v := range C.Floats() {
		if math.Abs(v-want[i]) > 1e-5*float64(k) {
			t.Fatalf("%s: element %d is %v, want %v", name, i, v, want[i])
		}
	}
}

// C comes down into out where it lies, with no staging, when out is
// pinned or a download's array locked in place, with whole-row tiles
// (blocks of whole rows, one contiguous copy each), with B's panels in
// pieces (blocks of C's columns) and with square tiles; a new result, a
// pageable out and a download's array not locked go through staging.
// Every product is right.
func TestMatmulWritesCWhereItLies(t *testing.T) {
	t.Run("cpu", func(t *testing.T) { testMatmulWritesCInPlace(t, newRuntime(t, "")) })
	t.Run("cuda", func(t *testing.T) { testMatmulWritesCInPlace(t, newCUDA(t)) })
}

func testMatmulWritesCInPlace(t *testing.T, rt *runtime.Runtime) {
	const m, k, n = bigM, bigK, bigN
	A, B := randomMatrix(t, rt, m, k, runtime.Float32), randomMatrix(t, rt, k, n, runtime.Float32)
	want := inCore(t, rt, A, B)
	outs := map[string]func() *runtime.HostArray{
		"a new result": func() *runtime.HostArray { return nil },
		"a pageable out": func() *runtime.HostArray {
			h, err := rt.NewHostArray([]int{m, n}, runtime.Float32, false)
			if err != nil {
				t.Fatal(err)
			}
			return h
		},
		"a pinned out": func() *runtime.HostArray {
			h, err := rt.NewHostArray([]int{m, n}, runtime.Float32, true)
			if err != nil {
				t.Fatal(err)
			}
			return h
		},
		"a download's array": func() *runtime.HostArray { return downloaded(t, rt, randomMatrix(t, rt, m, n, runtime.Float32)) },
		"a locked download": func() *runtime.HostArray {
			h := downloaded(t, rt, randomMatrix(t, rt, m, n, runtime.Float32))
			if _, ok := rt.PinInPlace(h); !ok {
				t.Fatal("a download's array was not locked in place")
			}
			return h
		},
	}
	where := map[string]string{
		"a new result":       "C comes down through pinned staging",
		"a pageable out":     "C comes down through pinned staging",
		"a pinned out":       "C is written into its own pinned memory",
		"a download's array": "C comes down through pinned staging",
		"a locked download":  "C is written where it lies, page-locked in place;",
	}
	for _, plan := range []struct {
		name   string
		pieces int
		budget uint64
		want   string
	}{
		{"whole rows", 1, uint64(4 * (256*n + 2*(256*512+512*n))), "in 4 tiles of C of 256x1100, each over 3 panels of A 256x512 and B 512x1100:"},
		{"pieces", 2, uint64(4 * (256*n + 2*(256*512+512*n/2))), "B 512x1100 in 2 pieces of 512x550"},
		{"squares", 1, 4 << 20, "tiles of C of"},
	} {
		if raceEnabled && plan.name == "squares" {
			continue // the race detector's run: the in-place paths' two kinds of copies
		}
		restore := batch.PanelsInPieces(plan.pieces)
		for name, out := range outs {
			if raceEnabled && name != "a pinned out" && name != "a locked download" {
				continue
			}
			var verbose bytes.Buffer
			C, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Budget: plan.budget, Out: out(), Verbose: &verbose})
			if err != nil {
				t.Fatalf("%s, %s: %v", plan.name, name, err)
			}
			if !strings.Contains(verbose.String(), plan.want) || !strings.Contains(verbose.String(), where[name]) {
				t.Fatalf("%s, %s: verbose does not say %q and %q: %s", plan.name, name, plan.want, where[name], verbose.String())
			}
			checkTraffic(t, verbose.String(), m, k, n, 4)
			checkProduct(t, plan.name+", "+name, C, want, k)
		}
		restore()
	}
}

// Verbose blames a slow launch on the driver's kernel loading only on a
// GPU: the CPU backend's products run before their launch returns, and
// these take longer than a loading would.
func TestVerboseBlamesNoKernelLoadingOnTheCPU(t *testing.T) {
	rt := newRuntime(t, "")
	const m, k, n = 768, 512, 768
	A, B := randomMatrix(t, rt, m, k, runtime.Float32), randomMatrix(t, rt, k, n, runtime.Float32)
	var verbose bytes.Buffer
	start := time.Now()
	if _, err := batch.Matmul(rt, A, B, batch.MatmulOptions{Budget: uint64(4 * (256*n + 2*(256*k+k*n))), Verbose: &verbose}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 20*time.Millisecond {
		t.Skipf("the product took %v: too fast to tell", took)
	}
	if v := verbose.String(); strings.Contains(v, "to launch") {
		t.Errorf("verbose blames kernel loading on the CPU backend:\n%s", v)
	}
}

// downloaded is h copied to the device and back into a download's new
// array: mapped memory, which the runtime can page-lock in place.
func downloaded(t *testing.T, rt *runtime.Runtime, h *runtime.HostArray) *runtime.HostArray {
	t.Helper()
	d, err := rt.ToDevice(h)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	got, err := d.CopyToHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
