package batch

import (
	"errors"
	goruntime "runtime"

	"github.com/gluaproject/glua/runtime"
)

// How C's tile lies in dC and comes down to the host, piece by piece.

// piece is a part of C's tile that comes down in one copy: off elements
// into dC (and into the staging it comes down into, laid out alike),
// rows×cols packed, landing at row r0 and column c0 of the tile.
type piece struct{ off, r0, rows, c0, cols int }

// tilePieces is how a mi×nj tile lies in dC and comes down: in blocks of
// t.block rows, or, where B's panels are in pieces, one piece of tq
// columns after another, each tm×tq apart and mi rows tall.
func (t *tiler) tilePieces(mi, nj int) []piece {
	var ps []piece
	if t.p.pieces() > 1 {
		for c0 := 0; c0 < nj; c0 += t.p.tq {
			ps = append(ps, piece{c0 * t.p.tm, 0, mi, c0, min(t.p.tq, nj-c0)})
		}
		return ps
	}
	for r0 := 0; r0 < mi; r0 += t.block {
		ps = append(ps, piece{r0 * nj, r0, min(t.block, mi-r0), 0, nj})
	}
	return ps
}

// takeC is the staging C's next tile comes down into, once the scatter
// out of it is done; or 0 where C is written in place.
func (t *tiler) takeC() (int, error) {
	if t.pinnedC != nil {
		return 0, nil
	}
	s := t.nextC
	if t.sC[1] != nil {
		t.nextC ^= 1
	}
	return s, t.scatteredBuf(s)
}

// scatterTile scatters the tile coming down into sC[s] into out, piece
// by piece as each lands, on another goroutine, so that the next tile's
// panels are gathered and multiplied meanwhile.
func (t *tiler) scatterTile(s int, out sink, i0, j0, nj int, tile []piece) {
	done := make(chan error, 1)
	t.scatter[s] = done
	landed, staged, p := t.landed[s], t.sC[s], t.p
	go func() {
		var dst *runtime.HostArray
		for b, pc := range tile {
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
			src := staged.Bytes()[pc.off*p.size : (pc.off+pc.rows*pc.cols)*p.size]
			if err := scatter(dst.Bytes(), src, p.size, i0+pc.r0, pc.rows, j0+pc.c0, pc.cols, p.n); err != nil {
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

// piecesBefore is how many of a tile's pieces hold elements of dC before
// element end: those a product writing dC up to end must wait to be
// down. A tile of another shape lays its pieces over other elements (C's
// last column of tiles is narrower than the next row's first, the last
// row of tiles shorter), so the count goes by elements, not rows.
func piecesBefore(tile []piece, end int) int {
	n := 0
	for n < len(tile) && tile[n].off < end {
		n++
	}
	return n
}

// queueDown queues Cb, piece b of step s's tile, down on the download
// stream once its product is done: into C where it lies when C is
// written in place, else into the staging s.into, where it lies in dC.
func (t *tiler) queueDown(Cb *runtime.Array, s stepOf, b int) error {
	pc := s.tile[b]
	if err := errors.Join(t.computedPiece[b].Record(nil), t.rt.StreamWait(t.down, t.computedPiece[b])); err != nil {
		return err
	}
	var down error
	traceStep("down", t.down, true)
	defer traceStep("down", t.down, false)
	if t.pinnedC == nil {
		hb, err := t.sC[s.into].Rows(pc.off+1, pc.off+Cb.Size())
		if err == nil {
			hb, err = hb.Reshape(Cb.Shape())
		}
		if err != nil {
			return err
		}
		down = Cb.CopyToHostAsync(hb, t.down)
	} else { // whole rows of C are one contiguous copy, which the block copy makes
		down = Cb.CopyToBlockAsync(t.pinnedC, s.i0+pc.r0+1, s.j0+pc.c0+1, t.down)
	}
	if down != nil {
		return down
	}
	t.movedC += uint64(Cb.Size() * t.p.size)
	return t.landed[s.into][b].Record(t.down)
}
