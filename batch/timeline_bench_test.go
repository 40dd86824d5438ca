package batch_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/runtime"
)

// BenchmarkOutOfCoreTimeline is BenchmarkOutOfCoreMatmul with every
// product, upload and download bracketed by timing events, to show where
// the device stands idle: it reports, in ms a call, the products' device
// time, the compute stream's gaps between its first product and its last,
// the lead before the first product (the first panels going up) and the
// tail after the last (C's last piece coming down), beside the wall time
// and the in-core product of the same matrices, after a first call that
// is not timed; and on the host, the time from the call to its first
// product, upload or download queued, and from the last queued to the
// call's return. GLUA_BENCH_OUT picks C:
// "pinned" (a pinned out), "new" (a new array each call) or "host" (an
// existing array, the default).
func BenchmarkOutOfCoreTimeline(b *testing.B) {
	rt, A, B, o := outOfCoreSetup(b)
	n := A.Shape()[0]
	incore := inCoreTime(b, rt, n, A.DType())
	type mark struct {
		what   string
		before bool
		ev     *runtime.Event
		host   time.Time
	}
	var marks []mark
	var events []*runtime.Event
	defer batch.TraceSteps(func(what string, s *runtime.Stream, before bool) {
		if len(marks) == len(events) {
			ev, err := rt.NewEvent()
			if err != nil {
				b.Fatal(err)
			}
			events = append(events, ev)
		}
		ev := events[len(marks)]
		if err := ev.Record(s); err != nil {
			b.Fatal(err)
		}
		marks = append(marks, mark{what, before, ev, time.Now()})
	})()
	var products, gaps, lead, tail, wall, downs, hostLead, hostTail float64
	calls := 0
	// the process's first call, which page-locks A and B and has the
	// driver load the tiles' kernel, is not timed
	var plan strings.Builder
	first := o
	first.Verbose = &plan
	if _, err := batch.Matmul(rt, A, B, first); err != nil {
		b.Fatal(err)
	}
	b.Log(plan.String())
	for b.Loop() {
		marks = marks[:0]
		start := time.Now()
		if _, err := batch.Matmul(rt, A, B, o); err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		wall += end.Sub(start).Seconds()
		hostLead += marks[0].host.Sub(start).Seconds()
		hostTail += end.Sub(marks[len(marks)-1].host).Seconds()
		t0 := marks[0].ev
		at := func(e *runtime.Event) float64 {
			s, err := e.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}
		type span struct{ from, to float64 }
		spans := map[string][]span{}
		open := map[string]float64{}
		for _, m := range marks {
			if m.before {
				open[m.what] = at(m.ev)
			} else {
				spans[m.what] = append(spans[m.what], span{open[m.what], at(m.ev)})
			}
		}
		if path := os.Getenv("GLUA_BENCH_TIMELINE"); path != "" { // the last call's, as CSV
			var csv strings.Builder
			for _, m := range marks {
				fmt.Fprintf(&csv, "%s,%v,%.6f\n", m.what, m.before, at(m.ev)*1e3)
			}
			if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		ps := spans["product"]
		slices.SortFunc(ps, func(x, y span) int { return int((x.from - y.from) * 1e9) })
		for i, p := range ps {
			products += p.to - p.from
			if i > 0 {
				gaps += max(0, p.from-ps[i-1].to)
			}
		}
		lead += ps[0].from
		last := 0.0
		for _, d := range spans["down"] {
			last = max(last, d.to)
			downs += d.to - d.from
		}
		tail += max(0, last-ps[len(ps)-1].to)
		calls++
	}
	per := func(v float64) float64 { return v / float64(calls) * 1e3 }
	b.ReportMetric(per(products), "products-ms")
	b.ReportMetric(per(gaps), "gaps-ms")
	b.ReportMetric(per(lead), "lead-ms")
	b.ReportMetric(per(tail), "tail-ms")
	b.ReportMetric(per(downs), "downs-ms")
	b.ReportMetric(per(wall), "wall-ms")
	b.ReportMetric(per(hostLead), "host-lead-ms")
	b.ReportMetric(per(hostTail), "host-tail-ms")
	b.ReportMetric(incore*1e3, "incore-ms")
	b.ReportMetric(incore/(wall/float64(calls)), "of-incore")
}
