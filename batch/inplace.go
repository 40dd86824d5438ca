package batch

import "github.com/gluaproject/glua/runtime"

// Where the tiler reads A and B from and writes C to on the host: the
// arrays themselves when they are pinned or can be page-locked where they
// lie, pinned staging or a pinned copy otherwise.

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
		t.pinnedB = B
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
		t.pinnedB = h
		t.bSource = "read where it lies, page-locked in place while it lives"
		return
	}
	if p.tm >= p.m {
		return
	}
	if h, err := t.rt.NewStaging(p.k*p.n, B.DType()); err == nil {
		t.bCopy, t.ownB = h, true
		t.pinnedB, _ = h.Reshape([]int{p.k, p.n})
		t.bSource = "read from a pinned copy, made during the first row of tiles"
	}
}

// pinC sets pinnedC when C has several tiles and the product's array is
// pinned, or page-locked in place already (a download's array that
// PinInPlace locked): C's pieces then come down into it where it lies,
// rather than into pinned staging as large as two tiles and from there,
// on the host's processors, into C. A new array is not locked for the
// product: page-locking a gigabyte costs tens of milliseconds, more than
// the staging's copies save, and the driver serializes it with the
// product's own calls.
func (t *tiler) pinC(out sink) error {
	p := t.p
	t.cSource = "comes down through pinned staging"
	if p.tm >= p.m && p.tn >= p.n || out.result {
		// a new result is not asked for here: it may wait for a
		// collection (NewResultArray), which then runs beside the first
		// row of tiles
		return nil
	}
	C, err := out.array()
	if err != nil {
		return err
	}
	if C.Pinned() {
		t.pinnedC, t.cSource = C, "is written into its own pinned memory"
	} else if h, ok := t.rt.PinnedInPlace(C, p.tm*p.n*p.size); ok {
		t.pinnedC, t.cSource = h, "is written where it lies, page-locked in place"
	}
	return nil
}
