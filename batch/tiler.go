package batch

import (
	"errors"
	goruntime "runtime"

	"github.com/gluaproject/glua/runtime"
)

// tiler holds what Matmul's tiles need on the device and the host: two
// slots of A and B panels on the device (and their events), so that one
// slot uploads on the copy stream while the other multiplies, stages
// slots of pinned staging for them on the host, and C's tile.
type tiler struct {
	rt     *runtime.Runtime
	p      plan
	opts   runtime.MatmulOptions
	copy   *runtime.Stream
	dA, dB [2]*runtime.Array          // device panels, flat
	sA, sB [stages]*runtime.HostArray // pinned staging, flat
	dC     *runtime.Array
	sC     *runtime.HostArray
	// uploaded is recorded on the copy stream after a slot's copies,
	// computed on the runtime's stream after the product that read them;
	// staged after the copies out of a staging slot.
	uploaded, computed [2]*runtime.Event
	used               [2]bool
	staged             [stages]*runtime.Event
	nstages            int // the staging slots in use: 2, or stages for a long product
	// downloaded is recorded after C's tile is queued down; scatter
	// reports when that tile is in out (nil when none is on its way).
	downloaded *runtime.Event
	scatter    chan error
	// pinnedB is all of B in pinned memory, flat, when C's tiles span
	// whole rows: B's panels are then contiguous pieces of it that upload
	// without staging. It is B itself when B is pinned; otherwise a copy,
	// filled panel by panel during the first row of tiles (ownB), so that
	// each later row moves B over the bus alone instead of copying it
	// into staging again, which halves what the host's memory carries.
	pinnedB *runtime.HostArray
	ownB    bool
}

func newTiler(rt *runtime.Runtime, p plan, dt runtime.DType, precision string, B *runtime.HostArray) (*tiler, error) {
	t := &tiler{rt: rt, p: p, opts: runtime.MatmulOptions{Precision: precision}}
	t.pinB(B)
	var err error
	if t.copy, err = rt.CopyStream(); err != nil {
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
	t.dC, t.sC = device(p.tm*p.tn), host(p.tm*p.tn)
	for s := range 2 {
		t.dA[s], t.dB[s] = device(p.tm*p.tk), device(p.tk*p.tn)
		t.uploaded[s], t.computed[s] = event(), event()
	}
	t.nstages = 2
	if p.tm < p.m { // several rows of tiles: long enough to pay for more staging
		t.nstages = stages
	}
	for s := range t.nstages {
		t.sA[s] = host(p.tm * p.tk)
		if t.pinnedB == nil {
			t.sB[s] = host(p.tk * p.tn)
		}
		t.staged[s] = event()
	}
	t.downloaded = event()
	if err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// pinB sets pinnedB when C's tiles span whole rows: B itself if it is
// pinned, else, when there is more than one row of tiles to read B again,
// a pinned copy if [host] pinned_limit has room for one (staging panel by
// panel otherwise).
func (t *tiler) pinB(B *runtime.HostArray) {
	p := t.p
	if p.tn != p.n {
		return
	}
	if B.Pinned() {
		t.pinnedB, _ = B.Reshape([]int{p.k * p.n})
		return
	}
	if p.tm >= p.m {
		return
	}
	if h, err := t.rt.NewStaging(p.k*p.n, B.DType()); err == nil {
		t.pinnedB, t.ownB = h, true
	}
}

// close frees the device buffers once the work on them is done, and gives
// the pinned staging back to the runtime's cache for the next product.
func (t *tiler) close() {
	t.scattered()
	t.rt.Synchronize()
	for _, a := range []*runtime.Array{t.dA[0], t.dA[1], t.dB[0], t.dB[1], t.dC} {
		if a != nil {
			a.Free()
		}
	}
	staging := append(append([]*runtime.HostArray{t.sC}, t.sA[:]...), t.sB[:]...)
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
func (t *tiler) run(A, B *runtime.HostArray, out func() (*runtime.HostArray, error)) error {
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
			for p0 := 0; p0 < p.k; p0 += p.tk {
				kp := min(p.tk, p.k-p0)
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
				gather(t.sA[stage].Bytes(), A.Bytes(), size, i0, mi, p0, kp, p.k)
				hB, err := t.panelB(B, stage, p0, kp, j0, nj, i0 == 0)
				if err != nil {
					return err
				}
				if err := t.multiply(step%2, stage, C, hB, mi, kp, nj, p0 > 0); err != nil {
					return err
				}
				step++
			}
			if err := t.download(C, out, i0, mi, j0, nj); err != nil {
				return err
			}
		}
	}
	return t.scattered()
}

// download queues C's tile down into its staging on the runtime's stream,
// after the products that write it and before the next tile's, and
// scatters it into out on another goroutine once it has arrived, so that
// the next tile's panels are gathered and multiplied meanwhile. The
// staging is written again only after that scatter is done.
func (t *tiler) download(C *runtime.Array, out func() (*runtime.HostArray, error), i0, mi, j0, nj int) error {
	if err := t.scattered(); err != nil {
		return err
	}
	hostC, err := hostView(t.sC, mi, nj)
	if err != nil {
		return err
	}
	if err := errors.Join(C.CopyToHostAsync(hostC, nil), t.downloaded.Record(nil)); err != nil {
		return err
	}
	done := make(chan error, 1)
	t.scatter = done
	go func() {
		if err := t.downloaded.Synchronize(); err != nil {
			done <- err
			return
		}
		dst, err := out()
		if err != nil {
			done <- err
			return
		}
		scatter(dst.Bytes(), hostC.Bytes(), t.p.size, i0, mi, j0, nj, t.p.n)
		goruntime.KeepAlive(dst) // a mapped out must outlive the writes
		done <- nil
	}()
	return nil
}

// scattered waits for the last tile's scatter, if one is under way.
func (t *tiler) scattered() error {
	if t.scatter == nil {
		return nil
	}
	err := <-t.scatter
	t.scatter = nil
	return err
}

// panelB is B's rows p0..p0+kp-1, columns j0..j0+nj-1, in pinned memory:
// a piece of pinnedB (copied there from B on the first row of tiles when
// pinnedB is a copy), or gathered into the staging slot.
func (t *tiler) panelB(B *runtime.HostArray, stage, p0, kp, j0, nj int, first bool) (*runtime.HostArray, error) {
	p, size := t.p, t.p.size
	if t.pinnedB == nil {
		gather(t.sB[stage].Bytes(), B.Bytes(), size, p0, kp, j0, nj, p.n)
		return hostView(t.sB[stage], kp, nj)
	}
	v, err := t.pinnedB.Rows(p0*p.n+1, (p0+kp)*p.n)
	if err != nil {
		return nil, err
	}
	if t.ownB && first {
		parallelCopy(v.Bytes(), B.Bytes()[p0*p.n*size:(p0+kp)*p.n*size])
	}
	return v.Reshape([]int{kp, nj})
}

// multiply uploads the A panel in staging slot stage and hB into device
// slot slot on the copy stream, once the product that last read that
// slot's device buffers is done, and queues C (+)= A·B on the runtime's
// stream once the copies are.
func (t *tiler) multiply(slot, stage int, C *runtime.Array, hB *runtime.HostArray, mi, kp, nj int, accumulate bool) error {
	rt := t.rt
	if t.used[slot] {
		if err := rt.StreamWait(t.copy, t.computed[slot]); err != nil {
			return err
		}
	}
	A, errA := deviceView(t.dA[slot], mi, kp)
	B, errB := deviceView(t.dB[slot], kp, nj)
	hA, errHA := hostView(t.sA[stage], mi, kp)
	if err := errors.Join(errA, errB, errHA); err != nil {
		return err
	}
	if err := errors.Join(A.CopyFromAsync(hA, t.copy), B.CopyFromAsync(hB, t.copy),
		t.uploaded[slot].Record(t.copy), t.staged[stage].Record(t.copy)); err != nil {
		return err
	}
	t.used[slot] = true
	if err := rt.StreamWait(nil, t.uploaded[slot]); err != nil {
		return err
	}
	o := t.opts
	if accumulate {
		o.Beta = 1
	}
	if err := rt.Matmul(C, A, B, o); err != nil {
		return err
	}
	return t.computed[slot].Record(nil)
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
func gather(dst, src []byte, size, r0, nr, c0, nc, width int) {
	if nc == width {
		parallelCopy(dst[:nr*nc*size], src[r0*width*size:(r0+nr)*width*size])
		return
	}
	parallelRows(nr, nc*size, func(r int) {
		from := ((r0+r)*width + c0) * size
		copy(dst[r*nc*size:(r+1)*nc*size], src[from:from+nc*size])
	})
}

// scatter is gather's reverse: packed src into rows and columns of dst.
func scatter(dst, src []byte, size, r0, nr, c0, nc, width int) {
	if nc == width {
		parallelCopy(dst[r0*width*size:(r0+nr)*width*size], src[:nr*nc*size])
		return
	}
	parallelRows(nr, nc*size, func(r int) {
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
