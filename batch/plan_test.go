package batch

import "testing"

// Whole-row tiles take the deepest panels that keep them tallRows tall:
// 2048 for 16384² float32 under 512 MiB, 1024 under 400 MiB (2048 deep
// would leave tiles of 1843 rows), 512 when the shallow panels let
// one tile hold all of C (the seed's 10000² float64 under nine tenths of
// 1 GiB) or when deeper ones would make the tile short; every plan fits.
func TestWholeRowPlansTakeTheDeepestPanelsThatKeepTheRows(t *testing.T) {
	for _, c := range []struct {
		m, n, k, size  int
		budget         uint64
		wantTK, wantTM int
	}{
		{16384, 16384, 16384, 4, 512 << 20, 2048, 2731},
		{16384, 16384, 16384, 4, 400 << 20, 1024, 3277},
		{10000, 10000, 10000, 8, 9 << 30 / 10, 512, 10000},
		{300, 9, 1100, 4, 4 * (70*9 + 2*(70*512+512*9)), 512, 60},
		{5000, 100, 600, 4, 64 << 20, 600, 5000}, // k under every depth: the whole of it
	} {
		p, err := planTiles(c.m, c.n, c.k, c.size, c.budget)
		if err != nil {
			t.Fatal(err)
		}
		if p.tn != c.n || p.tk != c.wantTK || p.tm != c.wantTM {
			t.Errorf("%dx%dx%d (%d B) under %d: %s; want tiles of %dx%d over panels %d deep", c.m, c.k, c.n, c.size, c.budget, p, c.wantTM, c.n, c.wantTK)
		}
		if p.bytes() > c.budget {
			t.Errorf("%s is over the budget %d", p, c.budget)
		}
	}
}
