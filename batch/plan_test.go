package batch

import (
	"testing"

	"github.com/gluaproject/glua/runtime"
)

// Whole-row tiles take the plan expected to take least. 16384² float32
// under nine tenths of 512 MiB and under 512 MiB: 2048-deep panels of B
// in two pieces, so that tiles of 4096 rows fit and B crosses the bus four
// times; under 512 MiB tiles of 2731 rows would fit with whole panels,
// but their first and last panels, multiplied in blocks of 683 rows,
// leave the device's last waves a tenth empty (0.865 of in core on an
// H200, against 0.887). Under 440 MiB, panels 1024 deep and whole: four
// pieces would upload B in rows of 16 KiB, which kept 33 GB/s beside the
// products on one host (0.839 against 0.854); under 400 MiB, four
// pieces, since two at 1024 deep bring each piece down slower than the
// next tile's products need it (0.811 against 0.839). bfloat16 (tensor
// cores: the bus is what takes time) takes the least traffic; the seed's
// 10000² float64 under nine tenths of 1 GiB, two tiles of 5000 rows over
// 2048-deep panels rather than one tile over 512-deep ones, whose last
// panel came down alone after the products (0.596 of in core against
// 0.507). Every plan fits.
func TestWholeRowPlansTakeWhatTheyExpectToTakeLeast(t *testing.T) {
	for _, c := range []struct {
		m, n, k              int
		dt                   runtime.DType
		budget               uint64
		wantTK, wantTM, want int // want: B's panels' width
	}{
		{16384, 16384, 16384, runtime.Float32, 512 << 20 / 10 * 9, 2048, 4096, 8192},
		{16384, 16384, 16384, runtime.Float32, 512 << 20, 2048, 4096, 8192},
		{16384, 16384, 16384, runtime.Float32, 440 << 20, 1024, 4096, 16384},
		{16384, 16384, 16384, runtime.Float32, 400 << 20, 2048, 4096, 4096},
		{16384, 16384, 16384, runtime.BFloat16, 512 << 20 / 10 * 9, 2048, 8192, 16384},
		{10000, 10000, 10000, runtime.Float64, 9 << 30 / 10, 2048, 5000, 10000},
		{300, 9, 1100, runtime.Float32, 4 * (70*9 + 2*(70*512+512*9)), 512, 60, 9},
		{5000, 100, 600, runtime.Float32, 64 << 20, 600, 5000, 100}, // k under every depth: the whole of it
	} {
		p, err := planTiles(c.m, c.n, c.k, c.dt.Size(), c.budget, busRatio(c.dt, ""), defaultMultiprocessors)
		if err != nil {
			t.Fatal(err)
		}
		if p.tn != c.n || p.tk != c.wantTK || p.tm != c.wantTM || p.tq != c.want {
			t.Errorf("%dx%dx%d %s under %d: %s; want tiles of %dx%d over panels %d deep, B's %d wide", c.m, c.k, c.n, c.dt, c.budget, p, c.wantTM, c.n, c.wantTK, c.want)
		}
		if p.bytes() > c.budget {
			t.Errorf("%s is over the budget %d", p, c.budget)
		}
	}
}

// Whatever the shapes, dtype size and budget, a plan either fits the
// budget with tiles and panels inside the matrices, B's pieces covering
// its tile's columns, or says why no tiling fits.
func FuzzPlansFitTheirBudget(f *testing.F) {
	f.Add(uint32(16384), uint32(16384), uint32(16384), uint8(4), uint64(448<<20), uint8(132))
	f.Add(uint32(10000), uint32(10000), uint32(10000), uint8(8), uint64(9<<30/10), uint8(132))
	f.Add(uint32(1), uint32(97), uint32(5), uint8(2), uint64(10), uint8(1))
	f.Fuzz(func(t *testing.T, m, k, n uint32, size uint8, budget uint64, sms uint8) {
		M, K, N := int(m%70000)+1, int(k%70000)+1, int(n%70000)+1
		sz := []int{2, 4, 8}[int(size)%3]
		p, err := planTiles(M, N, K, sz, budget, busRatio(runtime.Float32, ""), int(sms)+1)
		if err != nil {
			if smallest := (plan{M, N, K, 1, 1, 1, 1, sz}).bytes(); budget >= smallest {
				t.Fatalf("%dx%dx%d size %d under %d (1x1 tiles need %d): %v", M, K, N, sz, budget, smallest, err)
			}
			return
		}
		if p.bytes() > budget {
			t.Fatalf("%s is over the budget %d", p, budget)
		}
		if p.tm < 1 || p.tm > M || p.tn < 1 || p.tn > N || p.tk < 1 || p.tk > K || p.tq < 1 || p.tq > p.tn || p.pieces()*p.tq < p.tn {
			t.Fatalf("%dx%dx%d under %d: %s (tq %d)", M, K, N, budget, p, p.tq)
		}
	})
}
