package pool

import (
	"strings"
	"testing"
)

func TestLimitsRoundTrip(t *testing.T) {
	p := newTestPool(t, newFakeSource(gib), Config{SoftLimit: 10 * mib, HardLimit: 20 * mib})
	if s, h := p.Limits(); s != 10*mib || h != 20*mib {
		t.Fatalf("Limits() = %d, %d", s, h)
	}
	if err := p.SetLimits(0, 0); err != nil {
		t.Fatal(err)
	}
	if s, h := p.Limits(); s != 0 || h != 0 {
		t.Fatalf("cleared limits read %d, %d", s, h)
	}
	st := p.Stats()
	if st.SoftLimit != 0 || st.HardLimit != 0 {
		t.Fatalf("Stats limits %d, %d", st.SoftLimit, st.HardLimit)
	}
}

func TestHardLimitBelowLiveUseIsRefusedAndTheOldOneStays(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			src := newFakeSource(gib)
			p := newTestPool(t, src, Config{Strategy: strategy})
			a, _ := p.Alloc(40*mib, 0)
			b, _ := p.Alloc(40*mib, 0)
			if err := p.Free(b); err != nil {
				t.Fatal(err)
			}
			err := p.SetLimits(0, 30*mib)
			if err == nil {
				t.Fatal("SetLimits below the 40 MiB in use returned nil")
			}
			for _, want := range []string{"hard limit 30.00 MiB", "40.00 MiB", "the limits stay soft none, hard none"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "pool.") {
				t.Errorf("error %q names a Go function", err)
			}
			// The refused limit is not set: allocations go on as before.
			if s, h := p.Limits(); s != 0 || h != 0 {
				t.Fatalf("limits %d, %d after a refused SetLimits", s, h)
			}
			if st := p.Stats(); st.Reserved != 40*mib {
				t.Fatalf("reserved %d; the cached 40 MiB should have been released", st.Reserved)
			}
			c, err := p.Alloc(mib, 0)
			if err != nil {
				t.Fatalf("allocation after a refused limit: %v", err)
			}
			if err := p.Free(c); err != nil {
				t.Fatal(err)
			}
			if err := p.Free(a); err != nil {
				t.Fatal(err)
			}
			if err := p.SetLimits(0, 30*mib); err != nil {
				t.Fatalf("SetLimits once a is freed: %v", err)
			}
		})
	}
}

func TestSoftLimitReleasesCacheAfterFree(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			src := newFakeSource(gib)
			p := newTestPool(t, src, Config{Strategy: strategy, SoftLimit: 50 * mib})
			var live []*Block
			for i := 0; i < 6; i++ {
				b, err := p.Alloc(16*mib, 0)
				if err != nil {
					t.Fatal(err)
				}
				live = append(live, b)
			}
			for _, b := range live {
				if err := p.Free(b); err != nil {
					t.Fatal(err)
				}
			}
			if st := p.Stats(); st.Reserved > 50*mib {
				t.Fatalf("reserved %d stays above the 50 MiB soft limit after frees", st.Reserved)
			}
		})
	}
}
