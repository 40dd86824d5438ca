package batch

import (
	"errors"
	"fmt"
	"io"
	"math"
	goruntime "runtime"
	"time"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/npy"
	"github.com/gluaproject/glua/runtime"
)

// MatmulOptions tune Matmul.
type MatmulOptions struct {
	// Budget is the device memory the product may use; 0 is what the
	// pool's hard limit leaves free, less room for cuBLAS's workspace and
	// the pool's rounding (freeBudget), or nine tenths of the device's
	// free memory without a hard limit.
	Budget uint64
	// Precision is runtime.MatmulOptions' ("", "default" or "tf32").
	Precision string
	// Out receives the product when not nil (m×n, A's dtype); a
	// memory-mapped array cannot, being read-only.
	Out *runtime.HostArray
	// Verbose, when not nil, is told the tile plan.
	Verbose io.Writer
}

// plan is a tiling of C = A·B: C in tiles of tm×tn, each the sum over
// panels of A (tm×tk) times panels of B (tk×tq). B's panels are as wide
// as C's tiles (tq = tn) unless C's tiles span whole rows and B's panels
// are split into pieces of tq columns: each A panel then serves every
// piece of its B panel, and C's tile is held on the device piece by
// piece (each tm×tq, contiguous), so the tile can be taller in the same
// memory.
type plan struct {
	m, n, k, tm, tn, tk, tq, size int
}

// bytes is the device memory the plan holds: two buffers each of A's and
// B's panels (one uploading while the other is in use) and C's tile.
func (p plan) bytes() uint64 {
	return uint64(p.size) * uint64(2*p.tm*p.tk+2*p.tk*p.tq+p.tm*p.tn)
}

// pieces is how many pieces of columns B's panels (and C's tile) are in.
func (p plan) pieces() int { return ceilDiv(p.tn, p.tq) }

// planTiles chooses how to tile C = A·B under the budget. Where one row of
// tiles fits, C's tile spans whole rows of C and B's panels whole rows of
// B (or pieces of them), streamed along the inner dimension: B then moves
// once for each row of tiles, and the panels' depth and pieces are
// chosen by what the product is expected to take (wholeRows). Otherwise
// the tiles are squares, first with whole rows of A and columns of B,
// then with square panels too. busRatio is how many flops a product of
// this dtype runs while one byte crosses the bus; sms, the device's
// multiprocessors.
func planTiles(m, n, k, size int, budget uint64, busRatio float64, sms int) (plan, error) {
	whole := plan{m, n, k, m, n, k, n, size}
	if whole.bytes() <= budget {
		return whole, nil
	}
	words := float64(budget) / float64(size)
	if p, ok := wholeRows(m, n, k, size, words, busRatio, sms); ok {
		return p, nil
	}
	// t² + 4kt ≤ words, with tk = k
	if t := int(math.Sqrt(4*float64(k)*float64(k)+words) - 2*float64(k)); t >= 1 {
		tn := even(n, t)
		return plan{m, n, k, even(m, t), tn, k, tn, size}, nil
	}
	// 5t² ≤ words, with tm = tn = tk = t
	if t := int(math.Sqrt(words / 5)); t >= 1 {
		tn := even(n, t)
		return plan{m, n, k, even(m, t), tn, even(k, t), tn, size}, nil
	}
	smallest := plan{m, n, k, 1, 1, 1, 1, size}
	return plan{}, fmt.Errorf("a budget of %s leaves no room for any tiling; the smallest that works is %s (tiles of one element)",
		config.FormatSize(budget), config.FormatSize(smallest.bytes()))
}

// wholeRows plans C's tiles spanning whole rows, when a tile of minRows
// fits: tm·n + 2·tk·tq + 2·tm·tk ≤ words. Of the panel depths and pieces
// that fit, it takes the one expected to take least: the longer of the
// products' time, at the rate cuBLAS keeps at that depth (panelRate) on
// the waves of thread blocks the tile's products make (fill), and the
// bus's, B crossing it once for each row of tiles and A once, each at
// the rate its copies' rows keep (blockRate), which the products hide
// only up to hidden of their time. Deeper panels run cuBLAS at a better
// rate, and splitting B's panels into pieces leaves room for taller
// tiles, which read B fewer times, but in narrower rows. Of plans
// expected to take about as long, it takes the one whose products are
// expected to take least, then the least bus time: the products' rates
// are measured, while how far the bus hides behind them is a guess.
func wholeRows(m, n, k, size int, words, busRatio float64, sms int) (plan, bool) {
	type option struct {
		p                   plan
		cost, bus, products float64
	}
	var best option
	better := func(o option) bool {
		switch {
		case best.p.tm == 0 || o.cost < best.cost*(1-costTies):
			return true
		case o.cost > best.cost*(1+costTies):
			return false
		case o.products != best.products:
			return o.products < best.products
		}
		return o.bus < best.bus
	}
	for _, depth := range panelDepths {
		tk := min(k, depth)
		for q := 1; q <= maxPieces && (q == 1 || ceilDiv(n, q) >= minPieceCols); q *= 2 {
			if onlyPieces > 0 && q != onlyPieces {
				continue
			}
			tq := ceilDiv(n, q)
			tm := int((words - 2*float64(tk)*float64(tq)) / float64(n+2*tk))
			if tm < min(m, minRows) {
				continue
			}
			p := plan{m, n, k, even(m, tm), n, tk, tq, size}
			a, b, _ := p.traffic()
			rate := panelRate(tk) * p.fill(sms)
			bus := float64(a)/blockRate(tk*size, tk == k) + float64(b)/blockRate(tq*size, tq == n)
			o := option{p: p, products: 2 * float64(m) * float64(n) * float64(k) / rate, bus: bus * busRatio}
			o.cost = max(o.products, o.bus/hidden) + p.downWait(busRatio, sms)
			if better(o) {
				best = o
			}
		}
		if tk == k {
			break
		}
	}
	return best.p, best.p.tm > 0
}

// hidden is how much of the products' time the bus's can take and still
// be hidden behind them (16384² float32 with B's panels in four pieces
// kept the uploads busy 163 ms of a 190 ms call on an H200, the products
// waiting 9-11 ms for them); plans within costTies of each other are
// taken to cost the same.
const (
	hidden   = 0.88
	costTies = 0.02
)

// panelRate is the rate cuBLAS keeps, as a fraction of one product of the
// whole of A and B, when C is summed over panels depth deep, its thread
// blocks filling their waves: 16384² float32 in tiles of 2048 to 4096
// whole rows, whose blocks fill 0.97 of their waves, ran at 0.93 of the
// in-core product with panels 2048 deep, 0.89 with 1024 and 0.83-0.85
// with 512 (an H200, 2026-11-28), whether B's panels were whole or in two
// or four pieces.
func panelRate(depth int) float64 {
	switch {
	case depth >= 2048:
		return 0.96
	case depth >= 1024:
		return 0.92
	}
	return 0.86
}

// downWait is what C's tiles coming down add to a whole-row plan's time,
// in the units of wholeRows' costs: the last panel of each tile queues
// its pieces down (or blocks of rows, where the panels are whole) as each
// is computed, and the next tile's first panel overwrites each piece once
// it is down, so a piece that takes longer to come down than to compute
// holds the products back, at each tile's end; after the last tile, its
// last piece comes down alone. On an H200 (2026-11-29), pieces of 128 MiB
// beside products of 1.43 ms held each tile back 2.5 ms, as this counts.
func (p plan) downWait(busRatio float64, sms int) float64 {
	pieces, rows, cols := p.pieces(), p.tm, p.tq
	if p.inBlocks() {
		pieces, rows = downBlocks, ceilDiv(p.tm, downBlocks)
	}
	product := 2 * float64(rows) * float64(cols) * float64(p.tk) / (panelRate(p.tk) * waveFill(rows, cols, sms))
	down := float64(rows*cols*p.size) * busRatio / blockRate(cols*p.size, cols == p.n)
	// the compute stream's time and the pieces' landings, from the start
	// of a tile's last panel
	at, landed, wait := 0.0, 0.0, 0.0
	lands := make([]float64, pieces)
	for j := range lands {
		at += product
		landed = max(landed, at) + down
		lands[j] = landed
	}
	tail := landed - at
	for _, l := range lands {
		wait += max(0, l-at)
		at = max(at, l) + product
	}
	return float64(ceilDiv(p.m, p.tm)-1)*wait + tail
}

// blockRate is the share of the bus's rate that an upload of a block of
// rows rowBytes wide keeps while products run (contiguous: the rows are
// whole rows of the matrix, one copy). On an H200 beside a 4096×4096
// float32 product, pitched copies from page-locked memory ran at 33.5
// GB/s with rows of 8 or 16 KiB, 48.5-55 with 32 KiB and 55 with 64 KiB
// or one contiguous copy; with nothing else running, 8 KiB rows ran at 50
// and 16 KiB at 54, and 4 KiB rows at 34 (2026-11-28).
func blockRate(rowBytes int, contiguous bool) float64 {
	switch {
	case contiguous || rowBytes >= 64<<10:
		return 1
	case rowBytes >= 32<<10:
		return 0.9
	case rowBytes >= 8<<10:
		return 0.6
	}
	return 0.4
}

// fill is the share of the device that the products of a tile keep
// busy (waveFill), over its panels: where C's tile comes down in
// downBlocks blocks of rows (inBlocks), the last panel of each tile and
// the first of the next are multiplied block by block, so that the
// download overlaps them, and their thread blocks fill the device as
// blocks of that height.
//
// Blocks of 683 and 820 rows of 16384² float32 ran at 0.81 and 0.76 of in
// core, tiles of 2731, 3277 and 4096 rows at 0.86-0.93, and blocks of
// 1024 rows at 0.90 (an H200, 2026-11-29): what the block height leaves
// of the last row of thread blocks is most of the difference.
func (p plan) fill(sms int) float64 {
	whole := waveFill(p.tm, p.tq, sms)
	if !p.inBlocks() {
		return whole
	}
	// every tile's last panel, and the first of each after the first
	tiles, panels := ceilDiv(p.m, p.tm), ceilDiv(p.k, p.tk)
	all, split := tiles*panels, tiles
	if panels > 1 {
		split += tiles - 1
	}
	// time goes as 1/fill: the panels' mean of it, inverted
	t := float64(all-split)/whole + float64(split)/waveFill(ceilDiv(p.tm, downBlocks), p.tq, sms)
	return float64(all) / t
}

// inBlocks says whether C's tile comes down in downBlocks blocks of rows
// (as the tiler splits it: whole panels of B, a tile of splitMin bytes or
// more).
func (p plan) inBlocks() bool {
	return p.pieces() == 1 && p.tm*p.tn*p.size >= splitMin
}

// waveFill is the share of the device's multiprocessors that the thread
// blocks of a product writing rows×cols of C keep busy over their waves,
// cuBLAS's float32 blocks being taken as gemmRows×gemmCols of C, times
// the share of the last row of blocks that rows fill: in the same runs,
// tiles of 3277 whole rows in two pieces (832 blocks, seven waves on 132
// multiprocessors, 0.89 filled) ran at 0.865 of in core against 0.929
// for 4096 rows (1024 blocks, 0.97), and 5462 rows in four pieces at
// 0.863 (0.86).
func waveFill(rows, cols, sms int) float64 {
	rb := ceilDiv(rows, gemmRows)
	blocks := rb * ceilDiv(cols, gemmCols)
	return float64(blocks) / float64(ceilDiv(blocks, sms)*sms) * float64(rows) / float64(rb*gemmRows)
}

const (
	gemmRows = 256
	gemmCols = 128
	// defaultMultiprocessors stands in for a device that does not say
	// (the CPU backend, which then plans as for an H100 or H200).
	defaultMultiprocessors = 132
)

// busRatio is the flops a product of dt (in precision) runs while a byte
// crosses the bus. On an H200, float32 on the multiprocessors' own units
// ran at 54 TFLOPS and the bus at 54 GB/s: a thousand. float64's products
// run at about that rate on the cards glua targets; the 16-bit types and
// tf32, on tensor cores, at ten to fifteen times it.
func busRatio(dt runtime.DType, precision string) float64 {
	if (dt == runtime.Float32 && precision != "tf32") || dt == runtime.Float64 {
		return 1000
	}
	return 12000
}

// even is the tile length that splits length into the fewest tiles of at
// most most, all of one size but the last: every tile costs a pass over
// the other operand, and a last tile of a few rows would pay a whole pass
// for them while the others ran as long as the largest (16384 rows in
// tiles of at most 5461 are four of 4096, not three of 5461 and one row).
func even(length, most int) int {
	if most >= length {
		return length
	}
	return ceilDiv(length, ceilDiv(length, most))
}

// panelDepths are the inner dimensions a panel may have when C's tiles
// span whole rows, shallowest first; maxPieces is the most pieces a panel
// of B is split into, each at least minPieceCols columns, so that each
// piece's product still fills the device. minRows is the shortest
// whole-row tile worth having before squares are better.
var panelDepths = []int{512, 1024, 2048}

var minPieceCols = 2048

// onlyPieces, when not 0, is the only number of pieces whole-row plans
// consider (tests set it, with minPieceCols, to split small products).
var onlyPieces = 0

const (
	maxPieces = 4
	minRows   = 64
)

func (p plan) String() string {
	tiles := ceilDiv(p.m, p.tm) * ceilDiv(p.n, p.tn)
	panels := ceilDiv(p.k, p.tk)
	b := fmt.Sprintf("B %dx%d", p.tk, p.tn)
	if q := p.pieces(); q > 1 {
		b += fmt.Sprintf(" in %d pieces of %dx%d", q, p.tk, p.tq)
	}
	return fmt.Sprintf("%dx%d · %dx%d in %d tiles of C of %dx%d, each over %d panels of A %dx%d and %s: %s on the device",
		p.m, p.k, p.k, p.n, tiles, p.tm, p.tn, panels, p.tm, p.tk, b, config.FormatSize(p.bytes()))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Matmul computes A·B for host matrices too large to hold on the device at
// once, by tiles, with the next panels uploading on the copy stream while
// the current ones multiply. It is also right, in one tile, when
// everything fits.
func Matmul(rt *runtime.Runtime, A, B *runtime.HostArray, o MatmulOptions) (*runtime.HostArray, error) {
	if A == nil || B == nil {
		return nil, errors.New("A and B must be host arrays")
	}
	if A.NDim() != 2 || B.NDim() != 2 {
		return nil, fmt.Errorf("A and B must be matrices, got %s and %s", A, B)
	}
	m, k, k2, n := A.Shape()[0], A.Shape()[1], B.Shape()[0], B.Shape()[1]
	if k != k2 {
		return nil, fmt.Errorf("A is %dx%d but B is %dx%d; inner dimensions %d and %d differ", m, k, k2, n, k, k2)
	}
	dt := A.DType()
	if B.DType() != dt || !dt.IsFloat() {
		return nil, fmt.Errorf("A and B must have one float dtype, got %s and %s", dt, B.DType())
	}
	if o.Out != nil {
		if s := o.Out.Shape(); o.Out.NDim() != 2 || s[0] != m || s[1] != n || o.Out.DType() != dt {
			return nil, fmt.Errorf("out must be %dx%d %s, got %s", m, n, dt, o.Out)
		}
		if !o.Out.Writable() {
			return nil, errors.New("out is memory-mapped read-only; map it writable (cuda.create_npy, or cuda.load_npy with writable = true)")
		}
		if name := sharing(o.Out, A, B); name != "" {
			// Tiles of C land while later panels of A and B are still to be
			// read: a product cannot be written over its operands.
			return nil, fmt.Errorf("out shares memory with %s; write the product into a separate array", name)
		}
	}
	if m == 0 || n == 0 || k == 0 {
		return emptyProduct(rt, m, k, n, dt, o)
	}
	budget := o.Budget
	if budget == 0 {
		budget = freeBudget(rt)
	}
	p, err := planTiles(m, n, k, dt.Size(), budget, busRatio(dt, o.Precision), multiprocessors(rt))
	if err != nil {
		return nil, err
	}
	if o.Verbose != nil {
		fmt.Fprintf(o.Verbose, "batch.matmul: %s\n", p)
	}
	out := sink{array: func() (*runtime.HostArray, error) { return o.Out, nil }, landed: func(int) {}}
	if o.Out == nil {
		var stop func()
		out, stop = allocate(rt, []int{m, n}, dt, p.tm)
		defer stop()
	}
	start := time.Now()
	live, cached, _ := rt.PinnedStats()
	t, err := newTiler(rt, p, dt, o.Precision, A, B, out)
	if err != nil {
		return nil, err
	}
	defer t.close()
	if o.Verbose != nil {
		// what the pinned memory grew by is what was page-locked anew:
		// the staging's cache hands out memory locked already
		live2, cached2, _ := rt.PinnedStats()
		fmt.Fprintf(o.Verbose, "batch.matmul: A is %s; B is %s; C %s; set up in %.3f s, page-locking %s anew\n",
			t.aSource, t.bSource, t.cSource, time.Since(start).Seconds(), config.FormatSize((live2+cached2)-min(live2+cached2, live+cached)))
	}
	if err := t.run(A, B, out); err != nil {
		return nil, err
	}
	C, err := out.array()
	if err == nil && o.Verbose != nil {
		t.report(o.Verbose, time.Since(start))
	}
	return C, err
}

// traffic is what the plan moves over the bus: A once for each column of
// C's tiles, B once for each row of them, C down once.
func (p plan) traffic() (a, b, c uint64) {
	size := uint64(p.size)
	a = uint64(p.m) * uint64(p.k) * size * uint64(ceilDiv(p.n, p.tn))
	b = uint64(p.k) * uint64(p.n) * size * uint64(ceilDiv(p.m, p.tm))
	return a, b, uint64(p.m) * uint64(p.n) * size
}

// report tells w what the plan predicted would cross the bus and what the
// tiles queued, with the product's time and the mean rate that makes.
func (t *tiler) report(w io.Writer, elapsed time.Duration) {
	a, b, c := t.p.traffic()
	moved := t.movedA + t.movedB + t.movedC
	secs := max(elapsed.Seconds(), 1e-9)
	fmt.Fprintf(w, "batch.matmul: bus traffic planned %s up (A %s, B %s) and %s down; moved %s up (A %s, B %s) and %s down in %.3f s, %.1f GB/s on average\n",
		config.FormatSize(a+b), config.FormatSize(a), config.FormatSize(b), config.FormatSize(c),
		config.FormatSize(t.movedA+t.movedB), config.FormatSize(t.movedA), config.FormatSize(t.movedB), config.FormatSize(t.movedC),
		secs, float64(moved)/secs/1e9)
	if t.lockWait > 0 {
		fmt.Fprintf(w, "batch.matmul: waited %.3f s for A and B to be page-locked in place\n", t.lockWait.Seconds())
	}
	if t.slowestLaunch >= slowLaunch && onGPU(t.rt) {
		fmt.Fprintf(w, "batch.matmul: a product of tiles took %.3f s to launch: on a process's first product of this shape, "+
			"the CUDA driver loading cuBLAS's kernel for it (CUDA_MODULE_LOADING=EAGER loads every kernel when the process starts instead)\n",
			t.slowestLaunch.Seconds())
	}
}

// slowLaunch is the launch of a tile's product that verbose reports: a
// launch returns in microseconds, but the first of a shape in a process
// waits while the driver loads its kernel (32-50 ms on an H200's host).
const slowLaunch = 5 * time.Millisecond

// sharing names the first of A and B that shares memory with out, or is
// "".
func sharing(out, A, B *runtime.HostArray) string {
	switch {
	case out.SharesMemory(A):
		return "A"
	case out.SharesMemory(B):
		return "B"
	}
	return ""
}

// emptyProduct is A·B where A or B has no elements: m×n zeros, as NumPy
// gives (no elements at all when m or n is 0), written into out when it
// is given. Nothing is multiplied, but the precision is checked as for
// any product, by the runtime's matmul of empty arrays.
func emptyProduct(rt *runtime.Runtime, m, k, n int, dt runtime.DType, o MatmulOptions) (*runtime.HostArray, error) {
	var empty [3]*runtime.Array
	for i := range empty {
		a, err := rt.DeviceArray([]int{0, 0}, dt)
		if err != nil {
			return nil, err
		}
		defer a.Free()
		empty[i] = a
	}
	if err := rt.Matmul(empty[0], empty[1], empty[2], runtime.MatmulOptions{Precision: o.Precision}); err != nil {
		return nil, err
	}
	if o.Verbose != nil {
		what := "of zeros"
		if m == 0 || n == 0 {
			what = "and empty"
		}
		fmt.Fprintf(o.Verbose, "batch.matmul: %dx%d · %dx%d multiplies nothing: C is %dx%d %s, made on the host\n", m, k, k, n, m, n, what)
	}
	if o.Out == nil {
		return rt.NewHostArray([]int{m, n}, dt, false)
	}
	err := npy.Access(func() { clear(o.Out.Bytes()) }) // out may be a mapped file
	goruntime.KeepAlive(o.Out)                         // a mapping must outlive the writes
	if err != nil {
		return nil, err
	}
	return o.Out, nil
}

// multiprocessors is the GPU's count, or defaultMultiprocessors on a
// backend that is not a GPU, so that the CPU backend plans as the GPU it
// stands in for.
func multiprocessors(rt *runtime.Runtime) int {
	if info, err := rt.Device(); err == nil && info.ComputeCapability[0] > 0 && info.Multiprocessors > 0 {
		return info.Multiprocessors
	}
	return defaultMultiprocessors
}

// onGPU says whether rt runs on a GPU, whose launches queue the work
// (the CPU backend's do it before they return).
func onGPU(rt *runtime.Runtime) bool {
	info, err := rt.Device()
	return err == nil && info.ComputeCapability[0] > 0
}

// freeBudget is what the pool's hard limit leaves, less room for the
// rounding of the plan's buffers into segments and, while the runtime's
// stream has none, for the cuBLAS workspace its first product takes (a
// tenth at most); or nine tenths of the device's free memory where there
// is no limit (other processes may take some of it meanwhile). Under a
// hard limit of 512 MiB with the workspace taken, nine tenths of what was
// left planned 416 MiB for 16384² float32, at 0.84 of in core into a new
// array on an H200, where the 448 MiB that fit once the workspace was
// counted ran at 0.88.
func freeBudget(rt *runtime.Runtime) uint64 {
	s := rt.Stats()
	free := s.DeviceFree
	if _, hard := rt.Limits(); hard > 0 {
		free = min(free+s.Reserved-min(s.Used, s.Reserved), hard-min(s.Used, hard))
		return underHardLimit(free, rt.MatmulWorkspace() > 0)
	}
	return free / 10 * 9
}

// underHardLimit is freeBudget for free bytes under a hard limit, where
// the runtime's stream has its cuBLAS workspace already or not.
func underHardLimit(free uint64, workspace bool) uint64 {
	room := uint64(roundingRoom)
	if !workspace {
		room += workspaceRoom
	}
	return free - min(room, free/10)
}

// workspaceRoom is the workspace cuBLAS takes on a stream's first product
// (32 MiB; with less room it takes a smaller one, or none, for as long as
// the stream lives); roundingRoom, what the plan's five buffers may add
// as the pool rounds their segments up to 2 MiB.
const (
	workspaceRoom = 32 << 20
	roundingRoom  = 10 << 20
)
