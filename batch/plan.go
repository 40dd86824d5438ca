package batch

import (
	"fmt"
	"math"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/runtime"
)

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

// traffic is what the plan moves over the bus: A once for each column of
// C's tiles, B once for each row of them, C down once.
func (p plan) traffic() (a, b, c uint64) {
	size := uint64(p.size)
	a = uint64(p.m) * uint64(p.k) * size * uint64(ceilDiv(p.n, p.tn))
	b = uint64(p.k) * uint64(p.n) * size * uint64(ceilDiv(p.m, p.tm))
	return a, b, uint64(p.m) * uint64(p.n) * size
}
