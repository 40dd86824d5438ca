package batch

import (
	"errors"
	"fmt"
	goruntime "runtime"

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
	// block is the rows of C's tile that come down in one copy. The last
	// panel's product is queued block by block, each block queued down as
	// soon as it is computed, and the next tile's first product, which
	// overwrites the tile, block by block, each once its rows are down:
	// the download then overlaps those two products instead of standing
	// between them, and the last tile's blocks are scattered as they land.
	block int
	// computedBlock is recorded after a block's product; landed[s][b]
	// after block b's copy into sC[s]. prevC is the staging the previous
	// tile came down into (-1: none), prevRows and prevCols its shape.
	computedBlock             [downBlocks]*runtime.Event
	landed                    [2][downBlocks]*runtime.Event
	prevC, prevRows, prevCols int
	// uploaded is recorded on the copy stream after a slot's copies,
	// computed on the runtime's stream after the product that read them;
	// staged after the copies out of a staging slot.
	uploaded, computed [2]*runtime.Event
	used               [2]bool
	staged             [stages]*runtime.Event
	nstages            int // the staging slots in use: 2, or stages for a long product
	// scatter[s] reports when the tile in sC[s] is in out (nil when none
	// is on its way).
	scatter [2]chan error
	// pinnedB is all of B in pinned memory, flat, when C's tiles span
	// whole rows: B's panels are then contiguous pieces of it that upload
	// without staging. It is B itself when B is pinned; otherwise a copy,
	// filled panel by panel during the first row of tiles (ownB), so that
	// each later row moves B over the bus alone instead of copying it
	// into staging again, which halves what the host's memory carries.
	pinnedB *runtime.HostArray
	ownB    bool
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
}

func newTiler(rt *runtime.Runtime, p plan, dt runtime.DType, precision string, A, B *runtime.HostArray) (*tiler, error) {
	t := &tiler{rt: rt, p: p, opts: runtime.MatmulOptions{Precision: precision}, prevC: -1}
	t.pinA(A)
	t.pinB(B)
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
	t.dC, t.sC[0] = device(p.tm*p.tn), host(p.tm*p.tn)
	if p.tm < p.m || p.tn < p.n {
		t.sC[1] = host(p.tm * p.tn)
	}
	t.block = p.tm
	if p.tm*p.tn*p.size >= splitMin {
		t.block = ceilDiv(p.tm, downBlocks)
	}
	for b := range ceilDiv(p.tm, t.block) {
		t.computedBlock[b], t.landed[0][b], t.landed[1][b] = event(), event(), event()
	}
	for s := range 2 {
		t.dA[s], t.dB[s] = device(p.tm*p.tk), device(p.tk*p.tn)
		t.uploaded[s], t.computed[s] = event(), event()
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
			t.sB[s] = host(p.tk * p.tn)
		}
		t.staged[s] = event()
	}
	if err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// pinA sets pinnedA when C has several tiles (A is read for each column
// of them, and the product runs long enough to pay for locking): A itself
// if it is pinned, else A page-locked in place where the runtime can (a
// download's new array), in pieces of one row of tiles, locked from the
// first while the first tiles run. A's panels then go up as blocks of A
// by the copy engine instead of being gathered into staging by the
// host's processors, which share the host's memory with the bus.
func (t *tiler) pinA(A *runtime.HostArray) {
	p := t.p
	t.aSource = "gathered panel by panel into pinned staging"
	if A.Pinned() {
		t.pinnedA, t.aReady, t.aSource = A, func(int) error { return nil }, "read from its own pinned memory"
		return
	}
	band := p.tm * p.k * p.size
	h, ok := t.rt.PinnedInPlace(A, band)
	ready := func(int) error { return nil }
	if !ok && (p.tm < p.m || p.tn < p.n) {
		h, ready, ok = t.rt.PinInPlaceAhead(A, band)
	}
	if ok {
		t.pinnedA, t.aReady, t.aSource = h, ready, "read where it lies, page-locked in place while it lives"
	}
}

// pinB sets pinnedB when C's tiles span whole rows: B itself if it is
// pinned, else, when there is more than one row of tiles to read B again,
// B page-locked in place where the runtime can (the memory of a
// download's new array: PinInPlace), or a pinned copy if [host]
// pinned_limit has room for one (staging panel by panel otherwise). In
// place, the first call of a process does not page-lock a gigabyte of new
// memory for a 16384² float32 B and copy B into it, and later calls with
// the same B pay nothing.
func (t *tiler) pinB(B *runtime.HostArray) {
	p := t.p
	t.bSource = "staged panel by panel through pinned staging"
	if p.tn != p.n {
		return
	}
	if B.Pinned() {
		t.pinnedB, _ = B.Reshape([]int{p.k * p.n})
		t.bSource = "read from its own pinned memory"
		return
	}
	// B is locked a panel at a time, so that the first row of tiles
	// waits only for the panel it reads: the driver refuses a copy
	// across two pieces, and panels then never cross one.
	panel := p.tk * p.n * p.size
	h, ok := t.rt.PinnedInPlace(B, panel)
	if !ok && p.tm < p.m { // B is read again: worth page-locking in place
		h, t.bReady, ok = t.rt.PinInPlaceAhead(B, panel)
	}
	if ok {
		t.pinnedB, _ = h.Reshape([]int{p.k * p.n})
		t.bSource = "read where it lies, page-locked in place while it lives"
		return
	}
	if p.tm >= p.m {
		return
	}
	if h, err := t.rt.NewStaging(p.k*p.n, B.DType()); err == nil {
		t.pinnedB, t.ownB = h, true
		t.bSource = "read from a pinned copy, made during the first row of tiles"
	}
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
		staging = append(staging, t.pinnedB)
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
	p, size := t.p, t.p.size
	step := 0
	for i0 := 0; i0 < p.m; i0 += p.tm {
		mi := min(p.tm, p.m-i0)
		for j0 := 0; j0 < p.n; j0 += p.tn {
			nj := min(p.tn, p.n-j0)
			C, err := deviceView(t.dC, mi, nj)
			if err != nil {
				return err
			}
			into := -1 // the staging C's tile comes down into
			for p0 := 0; p0 < p.k; p0 += p.tk {
				kp := min(p.tk, p.k-p0)
				if p0+kp == p.k { // the last panel's product queues the tile down
					if into, err = t.takeC(); err != nil {
						return err
					}
				}
				// The host stages up to stages panels ahead of the copy
				// stream, so that a slow gather is not a gap between
				// products; a staging slot is written again once the
				// copies out of it are done.
				stage := step % t.nstages
				if step >= t.nstages { // the slot held an earlier panel
					if err := t.staged[stage].Synchronize(); err != nil {
						return err
					}
				}
				if t.pinnedA == nil {
					if err := gather(t.sA[stage].Bytes(), A.Bytes(), size, i0, mi, p0, kp, p.k); err != nil {
						return err
					}
				} else if err := t.aReady((i0 + mi) * p.k * size); err != nil {
					return fmt.Errorf("A: %w", err)
				}
				hB, err := t.panelB(B, stage, p0, kp, j0, nj, i0 == 0)
				if err != nil {
					return err
				}
				if err := t.multiply(step%2, stage, C, hB, i0, p0, into); err != nil {
					return err
				}
				step++
			}
			t.scatterTile(into, out, i0, mi, j0, nj)
		}
	}
	return t.scattered()
}

// takeC is the staging C's next tile comes down into, once the scatter
// out of it is done.
func (t *tiler) takeC() (int, error) {
	s := t.nextC
	if t.sC[1] != nil {
		t.nextC ^= 1
	}
	return s, t.scatteredBuf(s)
}

// scatterTile scatters the tile coming down into sC[s] into out, block by
// block as each lands, on another goroutine, so that the next tile's
// panels are gathered and multiplied meanwhile.
func (t *tiler) scatterTile(s int, out sink, i0, mi, j0, nj int) {
	done := make(chan error, 1)
	t.scatter[s] = done
	t.prevC, t.prevRows, t.prevCols = s, mi, nj
	landed, staged, p := t.landed[s], t.sC[s], t.p
	go func() {
		var dst *runtime.HostArray
		for b, r0 := 0, 0; r0 < mi; b, r0 = b+1, r0+t.block {
			rows := min(t.block, mi-r0)
			if err := landed[b].Synchronize(); err != nil {
				done <- err
				return
			}
			if dst == nil {
				var err error
				if dst, err = out.array(); err != nil {
					done <- err
					return
				}
			}
			src := staged.Bytes()[r0*nj*p.size : (r0+rows)*nj*p.size]
			if err := scatter(dst.Bytes(), src, p.size, i0+r0, rows, j0, nj, p.n); err != nil {
				done <- err
				return
			}
		}
		goruntime.KeepAlive(dst) // a mapped out must outlive the writes
		if j0+nj == p.n {
			out.landed(i0)
		}
		done <- nil
	}()
}

// scatteredBuf waits for the scatter out of sC[s], if one is under way.
func (t *tiler) scatteredBuf(s int) error {
	if t.scatter[s] == nil {
		return nil
	}
	err := <-t.scatter[s]
	t.scatter[s] = nil
	return err
}

// scattered waits for the tiles' scatters under way.
func (t *tiler) scattered() error {
	return errors.Join(t.scatteredBuf(t.nextC^1), t.scatteredBuf(t.nextC))
}

// panelB is B's rows p0..p0+kp-1, columns j0..j0+nj-1, in pinned memory:
// a piece of pinnedB (copied there from B on the first row of tiles when
// pinnedB is a copy), or gathered into the staging slot.
func (t *tiler) panelB(B *runtime.HostArray, stage, p0, kp, j0, nj int, first bool) (*runtime.HostArray, error) {
	p, size := t.p, t.p.size
	if t.pinnedB == nil {
		if err := gather(t.sB[stage].Bytes(), B.Bytes(), size, p0, kp, j0, nj, p.n); err != nil {
			return nil, err
		}
		return hostView(t.sB[stage], kp, nj)
	}
	v, err := t.pinnedB.Rows(p0*p.n+1, (p0+kp)*p.n)
	if err != nil {
		return nil, err
	}
	if t.ownB && first {
		if err := parallelCopy(v.Bytes(), B.Bytes()[p0*p.n*size:(p0+kp)*p.n*size]); err != nil {
			return nil, err
		}
	}
	if t.bReady != nil && first {
		if err := t.bReady((p0 + kp) * p.n * size); err != nil {
			return nil, fmt.Errorf("B: %w", err)
		}
	}
	return v.Reshape([]int{kp, nj})
}

// multiply uploads the A panel in staging slot stage and hB into device
// slot slot on the copy stream, once the product that last read that
// slot's device buffers is done, and queues C (+)= A·B on the runtime's
// stream once the copies are: block by block when first (C's previous
// tile must be down first) or when into is a staging to queue C down into
// (the last panel), in one product otherwise.
func (t *tiler) multiply(slot, stage int, C *runtime.Array, hB *runtime.HostArray, i0, p0, into int) error {
	rt := t.rt
	mi, nj, kp := C.Shape()[0], C.Shape()[1], hB.Shape()[0]
	first := p0 == 0
	if t.used[slot] {
		if err := rt.StreamWait(t.copy, t.computed[slot]); err != nil {
			return err
		}
	}
	A, errA := deviceView(t.dA[slot], mi, kp)
	B, errB := deviceView(t.dB[slot], kp, nj)
	if err := errors.Join(errA, errB); err != nil {
		return err
	}
	var upA error
	if t.pinnedA != nil {
		upA = A.CopyFromBlockAsync(t.pinnedA, i0+1, p0+1, t.copy)
	} else {
		hA, err := hostView(t.sA[stage], mi, kp)
		if err != nil {
			return err
		}
		upA = A.CopyFromAsync(hA, t.copy)
	}
	if err := errors.Join(upA, B.CopyFromAsync(hB, t.copy),
		t.uploaded[slot].Record(t.copy), t.staged[stage].Record(t.copy)); err != nil {
		return err
	}
	t.movedA += uint64(mi * kp * t.p.size)
	t.movedB += uint64(hB.NBytes())
	t.used[slot] = true
	if err := rt.StreamWait(nil, t.uploaded[slot]); err != nil {
		return err
	}
	o := t.opts
	if !first {
		o.Beta = 1
	}
	wait := first && t.prevC >= 0
	rows := mi
	if wait || into >= 0 {
		rows = t.block
	}
	waited := 0 // the previous tile's blocks this product has waited for
	for b, r0 := 0, 0; r0 < mi; b, r0 = b+1, r0+rows {
		r1 := min(r0+rows, mi)
		for ; wait && waited < blocksBefore(r1*nj, t.prevRows, t.prevCols, t.block); waited++ {
			if err := rt.StreamWait(nil, t.landed[t.prevC][waited]); err != nil {
				return err
			}
		}
		Cb, errC := C.Rows(r0+1, r1)
		Ab, errA := A.Rows(r0+1, r1)
		if err := errors.Join(errC, errA); err != nil {
			return err
		}
		if err := rt.Matmul(Cb, Ab, B, o); err != nil {
			return err
		}
		if into >= 0 {
			if err := t.queueDown(Cb, into, b, r0, r1); err != nil {
				return err
			}
		}
	}
	return t.computed[slot].Record(nil)
}

// blocksBefore is how many blocks (of block rows) of a rows×cols tile laid
// flat in dC hold elements before element end: those a product writing
// dC up to end must wait to be down. A tile of another width lays its rows
// over other elements (C's last column of tiles is narrower than the next
// row's first), so the count goes by elements, not rows.
func blocksBefore(end, rows, cols, block int) int {
	return min(ceilDiv(rows, block), ceilDiv(end, block*cols))
}

// queueDown queues rows r0..r1-1 of C's tile, block b, down into the
// same rows of staging s on the download stream, once their product is
// done.
func (t *tiler) queueDown(Cb *runtime.Array, s, b, r0, r1 int) error {
	nj := Cb.Shape()[1]
	hostC, err := hostView(t.sC[s], r1, nj)
	if err != nil {
		return err
	}
	hb, err := hostC.Rows(r0+1, r1)
	if err != nil {
		return err
	}
	t.movedC += uint64(hb.NBytes())
	return errors.Join(t.computedBlock[b].Record(nil), t.rt.StreamWait(t.down, t.computedBlock[b]),
		Cb.CopyToHostAsync(hb, t.down), t.landed[s][b].Record(t.down))
}

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

// gather copies rows r0..r0+nr-1, columns c0..c0+nc-1 of a row-major
// matrix of width columns (src) into dst, packed; whole rows are one
// contiguous copy, and either way the rows are shared among threads.
func gather(dst, src []byte, size, r0, nr, c0, nc, width int) error {
	if nc == width {
		return parallelCopy(dst[:nr*nc*size], src[r0*width*size:(r0+nr)*width*size])
	}
	return parallelRows(nr, nc*size, func(r int) {
		from := ((r0+r)*width + c0) * size
		copy(dst[r*nc*size:(r+1)*nc*size], src[from:from+nc*size])
	})
}

// scatter is gather's reverse: packed src into rows and columns of dst.
func scatter(dst, src []byte, size, r0, nr, c0, nc, width int) error {
	if nc == width {
		return parallelCopy(dst[r0*width*size:(r0+nr)*width*size], src[:nr*nc*size])
	}
	return parallelRows(nr, nc*size, func(r int) {
		to := ((r0+r)*width + c0) * size
		copy(dst[to:to+nc*size], src[r*nc*size:(r+1)*nc*size])
	})
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
// block's product would be too small to keep the device busy).
const downBlocks = 4

var splitMin = 32 << 20
