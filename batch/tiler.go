package batch

import (
	"errors"
	"fmt"
	"time"

	"github.com/gluaproject/glua/runtime"
)

// tiler holds what Matmul's tiles need on the device and the host: two
// slots of A and B panels on the device (and their events), so that one
// slot uploads on the copy stream while the other multiplies, stages
// slots of pinned staging for them on the host, and C's tile, which comes
// down on a stream of its own in blocks of rows.
type tiler struct {
	rt         *runtime.Runtime
	p          plan
	opts       runtime.MatmulOptions
	copy, down *runtime.Stream
	dA, dB     [2]*runtime.Array          // device panels, flat
	sA, sB     [stages]*runtime.HostArray // pinned staging, flat
	dC         *runtime.Array
	// sC are two pinned stagings of C's tile, taken in turn, so that a
	// tile comes down while the one before is still being scattered, or
	// waits for Go to zero the product's array (0.13-0.16 s for a
	// gigabyte it reused, on the H100's host, against 0.05 s for a row of
	// tiles); the second is there only with several tiles.
	sC    [2]*runtime.HostArray
	nextC int
	// block is the rows of C's tile that come down in one copy, where
	// B's panels are whole (each piece of a tile in pieces comes down in
	// one). The last panel's product is queued piece by piece, each piece
	// queued down as soon as it is computed, and the next tile's first
	// product, which overwrites the tile, piece by piece, each once the
	// pieces it overwrites are down: the download then overlaps those two
	// products instead of standing between them, and the last tile's
	// pieces are scattered as they land.
	block int
	// computedPiece is recorded after a piece's product; landed[s][b]
	// after piece b's copy into sC[s]. prevC is the staging the previous
	// tile came down into (-1: none), prevPieces its pieces.
	computedPiece [maxDown]*runtime.Event
	landed        [2][maxDown]*runtime.Event
	prevC         int
	prevPieces    []piece
	// uploaded is recorded on the copy stream after a B slot's copies
	// (and the A panel's queued before them), computed on the runtime's
	// stream after the product that read them, aComputed after the last
	// product that read an A slot; staged after the copies out of a
	// staging slot. A's slots go by panel, B's by step: with B's panels
	// in pieces, one A panel serves several steps.
	uploaded, computed [2]*runtime.Event
	aComputed          [2]*runtime.Event
	used, aUsed        [2]bool
	staged             [stages]*runtime.Event
	nstages            int // the staging slots in use: 2, or stages for a long product
	// scatter[s] reports when the tile in sC[s] is in out (nil when none
	// is on its way).
	scatter [2]chan error
	// pinnedB is all of B in pinned memory (k×n) when C's tiles span
	// whole rows: B's panels are then contiguous rows of it, or blocks of
	// them, that upload without staging. It is B itself when B is pinned; otherwise a copy,
	// filled panel by panel during the first row of tiles (ownB), so that
	// each later row moves B over the bus alone instead of copying it
	// into staging again, which halves what the host's memory carries.
	pinnedB *runtime.HostArray
	ownB    bool
	bCopy   *runtime.HostArray // the pinned copy, flat, when ownB
	// bSource says where B's panels come from, for verbose; movedA,
	// movedB and movedC count the bytes queued over the bus.
	bSource                string
	movedA, movedB, movedC uint64
	// bReady waits until B's first n bytes are page-locked in place,
	// where pinnedB is B being locked piece by piece (nil otherwise): the
	// first row of tiles waits only for the pieces it reads, not all of B.
	bReady func(n int) error
	// pinnedA is A itself when it is pinned or locked in place (its
	// panels then go up as blocks, with no gather on the host and no
	// staging for them), nil otherwise; aReady waits for A's first n
	// bytes, aSource says where A is read from.
	pinnedA *runtime.HostArray
	aReady  func(n int) error
	aSource string
	// pinnedC is the product's array itself when it is pinned or locked
	// in place (C's pieces then come down into it as blocks of it, with
	// no staging and no scatter on the host), nil otherwise; cSource says
	// how C comes down.
	pinnedC *runtime.HostArray
	cSource string
	// lockWait is how long the product waited for A's and B's pieces to
	// be page-locked in place, for verbose; slowestLaunch the longest a
	// product's call took to return, which is long when the driver loads
	// cuBLAS's kernel for the tiles on its first use in the process.
	lockWait, slowestLaunch time.Duration
}

// locked waits, through ready, until the first n bytes of an operand
// being page-locked in place are, counting the wait.
func (t *tiler) locked(ready func(int) error, n int) error {
	start := time.Now()
	err := ready(n)
	t.lockWait += time.Since(start)
	return err
}

func newTiler(rt *runtime.Runtime, p plan, dt runtime.DType, precision string, A, B *runtime.HostArray, out sink) (*tiler, error) {
	t := &tiler{rt: rt, p: p, opts: runtime.MatmulOptions{Precision: precision}, prevC: -1}
	t.pinA(A)
	t.pinB(B)
	if err := t.pinC(out); err != nil {
		return nil, err
	}
	var err error
	if t.copy, err = rt.CopyStream(); err != nil {
		return nil, err
	}
	if t.down, err = rt.DownloadStream(); err != nil {
		return nil, err
	}
	device := func(n int) *runtime.Array {
		var a *runtime.Array
		if err == nil {
			a, err = rt.DeviceArray([]int{n}, dt)
		}
		return a
	}
	host := func(n int) *runtime.HostArray {
		var h *runtime.HostArray
		if err == nil {
			h, err = rt.NewStaging(n, dt)
		}
		return h
	}
	event := func() *runtime.Event {
		var e *runtime.Event
		if err == nil {
			e, err = rt.NewSyncEvent()
		}
		return e
	}
	// C's tile first: the largest buffer takes the pool's largest free
	// block before the panels could split it (a cached segment that a
	// small block splits can no longer be released for a large one).
	t.dC = device(p.tm * p.tn)
	if t.pinnedC == nil {
		t.sC[0] = host(p.tm * p.tn)
		if p.tm < p.m || p.tn < p.n {
			t.sC[1] = host(p.tm * p.tn)
		}
	}
	t.block = p.tm
	if p.tm*p.tn*p.size >= splitMin {
		t.block = ceilDiv(p.tm, downBlocks)
	}
	for b := range len(t.tilePieces(p.tm, p.tn)) {
		t.computedPiece[b], t.landed[0][b], t.landed[1][b] = event(), event(), event()
	}
	for s := range 2 {
		t.dA[s], t.dB[s] = device(p.tm*p.tk), device(p.tk*p.tq)
		t.uploaded[s], t.computed[s], t.aComputed[s] = event(), event(), event()
	}
	t.nstages = 2
	if p.tm < p.m { // several rows of tiles: long enough to pay for more staging
		t.nstages = stages
	}
	for s := range t.nstages {
		if t.pinnedA == nil {
			t.sA[s] = host(p.tm * p.tk)
		}
		if t.pinnedB == nil {
			t.sB[s] = host(p.tk * p.tq)
		}
		t.staged[s] = event()
	}
	if err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// close frees the device buffers once the work on them is done, and gives
// the pinned staging back to the runtime's cache for the next product.
func (t *tiler) close() {
	t.scattered()
	t.rt.Synchronize()
	if t.down != nil {
		t.down.Synchronize() // blocks queued down by a product that then failed
	}
	for _, a := range []*runtime.Array{t.dA[0], t.dA[1], t.dB[0], t.dB[1], t.dC} {
		if a != nil {
			a.Free()
		}
	}
	staging := append(append([]*runtime.HostArray{t.sC[0], t.sC[1]}, t.sA[:]...), t.sB[:]...)
	if t.ownB {
		staging = append(staging, t.bCopy)
	}
	for _, h := range staging {
		if h != nil {
			t.rt.ReleasePinned(h)
		}
	}
}

// run computes out = A·B tile by tile; out is asked for once the first
// tile has come down.
func (t *tiler) run(A, B *runtime.HostArray, out sink) error {
	p := t.p
	step, panel := 0, 0
	for i0 := 0; i0 < p.m; i0 += p.tm {
		mi := min(p.tm, p.m-i0)
		for j0 := 0; j0 < p.n; j0 += p.tn {
			nj := min(p.tn, p.n-j0)
			tile := t.tilePieces(mi, nj)
			into := -1 // the staging C's tile comes down into
			for p0 := 0; p0 < p.k; p0 += p.tk {
				kp := min(p.tk, p.k-p0)
				if p0+kp == p.k { // the last panel's products queue the tile down
					var err error
					if into, err = t.takeC(); err != nil {
						return err
					}
				}
				for c0 := 0; c0 < nj; c0 += p.tq {
					// The host stages up to stages steps ahead of the copy
					// stream, so that a slow gather is not a gap between
					// products; a staging slot is written again once the
					// copies out of it are done.
					stage := step % t.nstages
					if step >= t.nstages { // the slot held an earlier step's
						if err := t.staged[stage].Synchronize(); err != nil {
							return err
						}
					}
					var upA func(*runtime.Array) error // A's panel goes up with its first piece of B
					if c0 == 0 {
						var err error
						if upA, err = t.panelA(A, stage, i0, mi, p0, kp); err != nil {
							return err
						}
					}
					upB, err := t.panelB(B, stage, p0, kp, j0, c0, min(p.tq, nj-c0), i0 == 0)
					if err != nil {
						return err
					}
					s := stepOf{n: step, panel: panel, stage: stage, i0: i0, j0: j0, mi: mi, nj: nj, kp: kp, c0: c0,
						first: p0 == 0, lastPiece: c0+p.tq >= nj, into: into, tile: tile}
					if err := t.multiply(s, upA, upB); err != nil {
						return err
					}
					step++
				}
				panel++
			}
			if t.pinnedC == nil {
				t.scatterTile(into, out, i0, j0, nj, tile)
			}
			t.prevC, t.prevPieces = into, tile
		}
	}
	if t.pinnedC != nil { // C is there once its last pieces are down
		return t.down.Synchronize()
	}
	return t.scattered()
}

// panelA is what puts A's rows i0..i0+mi-1, columns p0..p0+kp-1 into
// a device panel: a block copy of A where A is pinned (once the rows are
// locked), or a copy of them gathered into the staging slot.
func (t *tiler) panelA(A *runtime.HostArray, stage, i0, mi, p0, kp int) (func(*runtime.Array) error, error) {
	p, size := t.p, t.p.size
	if t.pinnedA != nil {
		if err := t.locked(t.aReady, (i0+mi)*p.k*size); err != nil {
			return nil, fmt.Errorf("A: %w", err)
		}
		return func(d *runtime.Array) error { return d.CopyFromBlockAsync(t.pinnedA, i0+1, p0+1, t.copy) }, nil
	}
	if err := gather(t.sA[stage].Bytes(), A.Bytes(), size, i0, mi, p0, kp, p.k); err != nil {
		return nil, err
	}
	h, err := hostView(t.sA[stage], mi, kp)
	if err != nil {
		return nil, err
	}
	return func(d *runtime.Array) error { return d.CopyFromAsync(h, t.copy) }, nil
}

// panelB is what puts B's rows p0..p0+kp-1, columns j0+c0 on (as many as
// the device panel has) into a device panel: from pinnedB (copied there
// from B on the first row of tiles when pinnedB is a copy), whole rows
// in one contiguous copy or a piece of them as a block; else gathered
// into the staging slot.
func (t *tiler) panelB(B *runtime.HostArray, stage, p0, kp, j0, c0, wc int, first bool) (func(*runtime.Array) error, error) {
	p, size := t.p, t.p.size
	if t.pinnedB == nil {
		if err := gather(t.sB[stage].Bytes(), B.Bytes(), size, p0, kp, j0+c0, wc, p.n); err != nil {
			return nil, err
		}
		h, err := hostView(t.sB[stage], kp, wc)
		if err != nil {
			return nil, err
		}
		return func(d *runtime.Array) error { return d.CopyFromAsync(h, t.copy) }, nil
	}
	if first && c0 == 0 {
		if t.ownB {
			rows := B.Bytes()[p0*p.n*size : (p0+kp)*p.n*size]
			if err := parallelCopy(t.bCopy.Bytes()[p0*p.n*size:(p0+kp)*p.n*size], rows); err != nil {
				return nil, err
			}
		}
		if t.bReady != nil {
			if err := t.locked(t.bReady, (p0+kp)*p.n*size); err != nil {
				return nil, fmt.Errorf("B: %w", err)
			}
		}
	}
	// whole rows of B are one contiguous copy, which the block copy makes
	return func(d *runtime.Array) error { return d.CopyFromBlockAsync(t.pinnedB, p0+1, j0+c0+1, t.copy) }, nil
}

// stepOf is one step of the product: the n-th, in the panel-th panel,
// out of staging slot stage, multiplying C's mi×nj tile's columns c0 on
// by a panel kp deep; first and lastPiece say whether it is the tile's
// first panel and its panel's last piece of B, into is the staging the
// tile comes down into when this is its last panel (-1 otherwise).
type stepOf struct {
	n, panel, stage, i0, j0, mi, nj, kp, c0 int
	first, lastPiece                        bool
	into                                    int
	tile                                    []piece
}

// multiply queues a step: A's panel (upA, nil when the panel's earlier
// step put it up) and B's panel or piece of one (upB) go up into their
// device slots on the copy stream, once the products that last read
// those slots are done, and C (+)= A·B on the runtime's stream once they
// are: in blocks of rows when it is the first panel (C's previous tile
// must be down first) or the last (C is queued down as it is computed)
// and B's panels are whole, in one product otherwise.
func (t *tiler) multiply(s stepOf, upA, upB func(*runtime.Array) error) error {
	rt, p := t.rt, t.p
	aslot, bslot := s.panel%2, s.n%2
	wc := min(p.tq, s.nj-s.c0)
	A, errA := deviceView(t.dA[aslot], s.mi, s.kp)
	B, errB := deviceView(t.dB[bslot], s.kp, wc)
	if err := errors.Join(errA, errB); err != nil {
		return err
	}
	if upA != nil {
		if t.aUsed[aslot] {
			if err := rt.StreamWait(t.copy, t.aComputed[aslot]); err != nil {
				return err
			}
		}
		traceStep("up", t.copy, true)
		if err := upA(A); err != nil {
			return err
		}
		traceStep("up", t.copy, false)
		t.movedA += uint64(s.mi * s.kp * p.size)
		t.aUsed[aslot] = true
	}
	if t.used[bslot] {
		if err := rt.StreamWait(t.copy, t.computed[bslot]); err != nil {
			return err
		}
	}
	traceStep("up", t.copy, true)
	upErr := upB(B)
	traceStep("up", t.copy, false)
	if err := errors.Join(upErr, t.uploaded[bslot].Record(t.copy), t.staged[s.stage].Record(t.copy)); err != nil {
		return err
	}
	t.movedB += uint64(s.kp * wc * p.size)
	t.used[bslot] = true
	if err := rt.StreamWait(nil, t.uploaded[bslot]); err != nil {
		return err
	}
	// C's piece for this step: the whole tile, or the piece of columns
	base, b0 := 0, 0
	if p.pieces() > 1 {
		b0 = s.c0 / p.tq
		base = s.tile[b0].off
	}
	C, err := t.dC.Rows(base+1, base+s.mi*wc)
	if err == nil {
		C, err = C.Reshape([]int{s.mi, wc})
	}
	if err != nil {
		return err
	}
	o := t.opts
	if !s.first {
		o.Beta = 1
	}
	wait := s.first && t.prevPieces != nil
	rows := s.mi
	if p.pieces() == 1 && (wait || s.into >= 0) {
		rows = t.block
	}
	waited := 0 // the previous tile's pieces this product has waited for
	for b, r0 := b0, 0; r0 < s.mi; b, r0 = b+1, r0+rows {
		r1 := min(r0+rows, s.mi)
		for ; wait && waited < piecesBefore(t.prevPieces, base+r1*wc); waited++ {
			if err := rt.StreamWait(nil, t.landed[t.prevC][waited]); err != nil {
				return err
			}
		}
		Cb, errC := C.Rows(r0+1, r1)
		Ab, errA := A.Rows(r0+1, r1)
		if err := errors.Join(errC, errA); err != nil {
			return err
		}
		launch := time.Now()
		traceStep("product", nil, true)
		if err := rt.Matmul(Cb, Ab, B, o); err != nil {
			return err
		}
		traceStep("product", nil, false)
		t.slowestLaunch = max(t.slowestLaunch, time.Since(launch))
		if s.into >= 0 {
			if err := t.queueDown(Cb, s, b); err != nil {
				return err
			}
		}
	}
	if err := t.computed[bslot].Record(nil); err != nil {
		return err
	}
	if s.lastPiece {
		return t.aComputed[aslot].Record(nil)
	}
	return nil
}

// traceStep, where tests set it, is called on either side of each
// product, upload and download the tiler queues, with the stream it goes
// on (nil: the runtime's), so that a benchmark can time each stream's
// work on the device and find where it stands idle.
var traceStep = func(what string, s *runtime.Stream, before bool) {}

// deviceView is the first r×c elements of a flat buffer as an r×c matrix.
func deviceView(a *runtime.Array, r, c int) (*runtime.Array, error) {
	v, err := a.Rows(1, r*c)
	if err != nil {
		return nil, err
	}
	return v.Reshape([]int{r, c})
}

func hostView(h *runtime.HostArray, r, c int) (*runtime.HostArray, error) {
	v, err := h.Rows(1, r*c)
	if err != nil {
		return nil, err
	}
	return v.Reshape([]int{r, c})
}

// stages is how many panels the host may stage ahead of the copy stream
// when C has several rows of tiles. With only the two the device slots
// need, a gather that ran late (the host's memory is shared with the bus
// and the collector) held the next upload back and left the device
// waiting: 16384² float32 under 512 MiB ran at 0.70–0.72 of in core with
// four against 0.69–0.71 with two, in one run on the H100. A product of
// one row of tiles keeps two, since page-locking the staging of a short
// run cost more than it saved (the seed's 10000² float64: 0.1 s).
const stages = 4

// downBlocks is how many blocks of rows C's tile comes down in, when it is
// at least splitMin bytes (a smaller one comes down in one copy, where a
// block's product would be too small to keep the device busy); maxDown
// is the most pieces a tile comes down in, either way.
const (
	downBlocks = 4
	maxDown    = max(downBlocks, maxPieces)
)

var splitMin = 32 << 20
