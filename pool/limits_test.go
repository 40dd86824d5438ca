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

func TestLoweringHardLimitBelowLiveUseSaysWhatItCouldNot(t *testing.T) {
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
			for _, want := range []string{"pool.SetLimits", "hard limit 30.00 MiB", "40.00 MiB"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			// The limit holds: nothing new fits until a is freed.
			if _, h := p.Limits(); h != 30*mib {
				t.Fatalf("hard limit %d after SetLimits", h)
			}
			if st := p.Stats(); st.Reserved != 40*mib {
				t.Fatalf("reserved %d; the cached 40 MiB should have been released", st.Reserved)
			}
			if _, err := p.Alloc(mib, 0); err == nil {
				t.Fatal("allocation above the lowered hard limit succeeded")
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
