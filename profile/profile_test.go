package profile

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const mib = 1 << 20

// leakingRun is a run of a script that allocates a scratch array once, a
// temporary each iteration (freed), and a result each iteration it keeps,
// under a hard limit of 64 MiB, until an allocation fails.
func leakingRun() *Profile {
	p := &Profile{
		Title: "leak.lua", Created: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC),
		Device: "cpu backend: CPU (4 threads)", Strategy: "caching",
		Limits: []Limits{{Soft: 48 * mib, Hard: 64 * mib}},
	}
	var reserved uint64 = 0
	t := time.Duration(0)
	add := func(k Kind, site string, n uint64) {
		switch k {
		case Alloc:
			reserved = max(reserved, live(p.Events)+n)
		}
		p.Events = append(p.Events, Event{Time: t, Kind: k, Site: site, NBytes: n, Reserved: reserved})
		t += 3 * time.Millisecond
	}
	add(Alloc, "leak.lua:5", mib)
	for i := 0; i < 14; i++ {
		add(Alloc, "leak.lua:9", 2*mib)
		add(Free, "leak.lua:9", 2*mib)
		add(Alloc, "leak.lua:8", 4*mib)
	}
	add(OOM, "leak.lua:8", 4*mib)
	p.Duration = t
	// The 14 results and the scratch array, with 7 MiB cached in pieces
	// too small for a fifteenth result.
	seg := Segment{Address: 1 << 40, Size: 64 * mib}
	var off uint64
	piece := func(n uint64, site string) {
		if n == 0 {
			return
		}
		seg.Pieces = append(seg.Pieces, Piece{Offset: off, Size: n, Live: site != "", Site: site})
		off += n
	}
	for _, run := range []struct {
		results int
		cached  uint64
	}{{4, 3 * mib}, {5, 2 * mib}, {5, 0}} {
		for range run.results {
			piece(4*mib, "leak.lua:8")
		}
		piece(run.cached, "")
	}
	piece(mib, "leak.lua:5")
	piece(2*mib, "")
	p.Snapshots = []Snapshot{
		{Name: SnapshotPeak, Time: t - 3*time.Millisecond, Live: 57 * mib, Hard: 64 * mib, Segments: []Segment{seg}},
		{Name: SnapshotOOM, Time: t - 3*time.Millisecond, Live: 57 * mib, Requested: 4 * mib, Site: "leak.lua:8", Hard: 64 * mib,
			Segments: []Segment{{Address: seg.Address, Size: seg.Size, Pieces: append([]Piece(nil), seg.Pieces...)}}},
	}
	return p
}

// live is the bytes the events leave allocated.
func live(events []Event) uint64 {
	var n uint64
	for _, e := range events {
		switch e.Kind {
		case Alloc:
			n += e.NBytes
		case Free:
			n -= e.NBytes
		}
	}
	return n
}

// element is a node of the page as encoding/xml reads it.
type element struct {
	name  string
	attrs map[string]string
	text  string
}

// parsePage reads the page as XML (it is written to parse as both) and
// returns its elements in document order.
func parsePage(t *testing.T, page []byte) []element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	d.Entity = xml.HTMLEntity
	var out []element
	var stack []int
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			stack = append(stack, len(out)-1)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				out[stack[len(stack)-1]].text += string(tok)
			}
		}
	}
	return out
}

func byID(els []element, id string) *element {
	for i := range els {
		if els[i].attrs["id"] == id {
			return &els[i]
		}
	}
	return nil
}

// countWhere counts the elements pred accepts.
func countWhere(els []element, pred func(element) bool) int {
	n := 0
	for _, e := range els {
		if pred(e) {
			n++
		}
	}
	return n
}

func hasClass(e element, class string) bool {
	for _, c := range strings.Fields(e.attrs["class"]) {
		if c == class {
			return true
		}
	}
	return false
}

func writePage(t *testing.T, p *Profile) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("GLUA_ARTIFACTS"); dir != "" {
		path := filepath.Join(dir, "profile-"+strings.ReplaceAll(t.Name(), "/", "-")+".html")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("page written to %s", path)
	}
	return buf.Bytes()
}

// The page of a leaking run that ended out of memory draws every part:
// a band per site, the reserved line, both limits, the peak and the OOM,
// the segments at the peak and at the OOM with the request, and the table.
func TestPageDrawsTimelineLimitsMarksSegmentsAndSites(t *testing.T) {
	page := writePage(t, leakingRun())
	els := parsePage(t, page)
	for _, id := range []string{"timeline", "bands", "band-0", "band-1", "band-2", "reserved", "soft-limit", "hard-limit", "peak", "oom-1",
		"segments-peak", "segments-oom", "sites", "tooltip", "script-error", "hover", "crosshair"} {
		if byID(els, id) == nil {
			t.Errorf("no element with id %q", id)
		}
	}
	if e := byID(els, "band-3"); e != nil {
		t.Errorf("a fourth band for three sites: %v", e.attrs)
	}
	for i, e := range els {
		if e.attrs["id"] == "band-0" && (i+1 == len(els) || els[i+1].name != "title" || els[i+1].text != "leak.lua:8") {
			t.Errorf("the bottom band is not titled leak.lua:8, the largest site")
		}
	}
	for _, id := range []string{"band-0", "reserved", "hard-limit"} {
		if e := byID(els, id); e != nil && len(e.attrs["d"]) < 20 {
			t.Errorf("%s has no path: %q", id, e.attrs["d"])
		}
	}
	pieces := func(els []element) int {
		return countWhere(els, func(e element) bool { return e.name == "rect" && hasClass(e, "piece") })
	}
	if n := pieces(els); n != 18 || !strings.Contains(string(page), "The pool was as at the out-of-memory error, below.") {
		t.Errorf("%d pieces drawn; want the 18 of the one segment once, the peak being the OOM's moment", n)
	}
	p := leakingRun()
	p.Snapshots[0].Segments[0].Pieces[4].Live = true
	p.Snapshots[0].Segments[0].Pieces[4].Site = "leak.lua:9"
	if n := pieces(parsePage(t, writePage(t, p))); n != 2*18 {
		t.Errorf("%d pieces drawn; want the 18 of the one segment at the peak, and again at the OOM", n)
	}
	if n := countWhere(els, func(e element) bool { return hasClass(e, "asked") }); n != 1 {
		t.Errorf("%d bars of the failed request; want 1, at the OOM", n)
	}
	rows := countWhere(els, func(e element) bool { return e.name == "tr" })
	if rows != 1+3 {
		t.Errorf("%d table rows; want a header and 3 sites", rows)
	}
	text := string(page)
	for _, want := range []string{
		"Memory profile: leak.lua", "cpu backend: CPU (4 threads)", "2025-03-04",
		"hard limit 64 MiB", "soft limit 48 MiB", "peak 57 MiB",
		`<td class="site">leak.lua:8</td><td>56 MiB</td><td>14</td><td>14</td><td>56 MiB</td>`,
		"64 MiB reserved in 1 segment: 57 MiB used, 7.0 MiB cached (the largest free block 3.0 MiB)",
		`data-rendered="pending"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// The page is self-contained: nothing refers to the network or to another
// file, and the script's data cannot end its element.
func TestPageLoadsNothing(t *testing.T) {
	p := leakingRun()
	p.Title = `</script><img src="http://example.com/x.png">`
	p.Events[1].Site = `a"b<c>&d.lua:1`
	page := string(writePage(t, p))
	for _, e := range parsePage(t, []byte(page)) {
		switch e.name {
		case "img", "link", "iframe", "object", "embed", "image", "use":
			t.Errorf("the page has a <%s> element", e.name)
		}
		for _, attr := range []string{"src", "href"} {
			if v, ok := e.attrs[attr]; ok {
				t.Errorf("<%s> has %s=%q", e.name, attr, v)
			}
		}
	}
	for _, bad := range []string{"@import", "url(http", "url(//"} {
		if strings.Contains(page, bad) || strings.Contains(pageCSS, bad) {
			t.Errorf("the page's style loads from elsewhere: %q", bad)
		}
	}
	if strings.Count(page, "</script>") != 1 || strings.Contains(pageJS, "]]>") || strings.Contains(pageJS, "</script") {
		t.Error("the script element or its CDATA section ends early")
	}
}

// Many events thin to a bounded number of points, and the peak survives
// the thinning.
func TestTimelineThinsEventsAndKeepsThePeak(t *testing.T) {
	p := &Profile{Title: "many"}
	var live uint64
	for i := 0; i < 200000; i++ {
		ev := Event{Time: time.Duration(i) * time.Microsecond, Kind: Alloc, Site: fmt.Sprintf("s.lua:%d", i%20), NBytes: 1024}
		if i%2 == 1 {
			ev.Kind = Free
			ev.Site = fmt.Sprintf("s.lua:%d", (i-1)%20)
		} else {
			live += 1024
		}
		if i == 150000 {
			ev.NBytes = 100 * mib // one spike
		}
		p.Events = append(p.Events, ev)
	}
	a, err := analyse(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(a.points); n > 2*maxBuckets+2 {
		t.Fatalf("%d points for 200,000 events; want at most %d", n, 2*maxBuckets+2)
	}
	var high uint64
	for _, pt := range a.points {
		high = max(high, pt.total())
	}
	if high != a.peakLive || a.peakLive < 100*mib {
		t.Fatalf("the thinned timeline's highest point is %d bytes, the peak %d; want the 100 MiB spike in both", high, a.peakLive)
	}
	if len(a.bands) != topSites+1 || a.bands[topSites] != otherSite {
		t.Fatalf("bands %q; want the top %d sites and %q", a.bands, topSites, otherSite)
	}
	page := writePage(t, p)
	if len(page) > 1<<20 {
		t.Fatalf("the page of 200,000 events is %d bytes; want it under 1 MiB", len(page))
	}
}

// An empty recording is still a valid page that says so.
func TestEmptyProfileIsAValidPage(t *testing.T) {
	page := writePage(t, &Profile{Title: "nothing"})
	els := parsePage(t, page)
	if byID(els, "timeline") == nil || !strings.Contains(string(page), "No memory events were recorded.") {
		t.Fatal("an empty profile should still draw its axes and say nothing was recorded")
	}
}

// Events out of time order are an error, not a wrong picture.
func TestEventsOutOfOrderAreAnError(t *testing.T) {
	p := &Profile{Events: []Event{{Time: time.Second, Kind: Alloc, NBytes: 1}, {Time: 0, Kind: Free, NBytes: 1}}}
	err := Write(io.Discard, p)
	if err == nil || !strings.Contains(err.Error(), "out of time order") {
		t.Fatalf("Write = %v; want an error about time order", err)
	}
}

// A hard limit far above what the run used does not flatten the picture:
// it is named above the scale instead.
func TestLimitFarAboveTheDataIsNamedNotDrawn(t *testing.T) {
	p := leakingRun()
	p.Limits = []Limits{{Hard: 1 << 40}}
	els := parsePage(t, writePage(t, p))
	if byID(els, "hard-limit") != nil || byID(els, "hard-limit-above") == nil {
		t.Fatal("a 1 TiB limit over a 64 MiB run should be a note above the scale, not a line")
	}
}

func TestSizeStepsAreRound(t *testing.T) {
	for _, c := range []struct {
		top  float64
		want float64
	}{
		{64 * mib * 1.08, 20 * mib},
		{1000, 200},
		{3 << 30, 512 * mib},
		{1.5 * mib, 256 << 10},
	} {
		if got := sizeStep(c.top); got != c.want {
			t.Errorf("sizeStep(%s) = %s; want %s", size(uint64(c.top)), size(uint64(got)), size(uint64(c.want)))
		}
	}
}

// Memory the runtime took for itself (a cuBLAS workspace) is a site of
// its own in the timeline and the table, and the segments say how much of
// the used memory is arrays and how much is the runtime's.
func TestRuntimeMemoryIsASiteOfItsOwnAndTheSegmentsSaySo(t *testing.T) {
	p := leakingRun()
	ws := Event{Time: 0, Kind: Alloc, Site: "cuBLAS workspace", Holder: HeldByRuntime, NBytes: 2 * mib, Reserved: 2 * mib}
	p.Events = append([]Event{ws}, p.Events...)
	for i := range p.Snapshots {
		snap := &p.Snapshots[i]
		snap.Live += 2 * mib
		pc := &snap.Segments[0].Pieces[len(snap.Segments[0].Pieces)-1] // the last 2 MiB, cached before
		pc.Live, pc.Site, pc.Holder = true, "cuBLAS workspace", HeldByRuntime
	}
	page := writePage(t, p)
	els := parsePage(t, page)
	text := string(page)
	for _, want := range []string{
		"peak 59 MiB",
		`<td class="site">cuBLAS workspace</td><td>2.0 MiB</td><td>not arrays</td>`,
		"64 MiB reserved in 1 segment: 59 MiB used, 5.0 MiB cached",
		"Used: 57 MiB by arrays; 2.0 MiB by the runtime itself, not arrays (cuBLAS workspace).",
		"used by the runtime itself, not by arrays",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(text, "The timeline has") || strings.Contains(text, "held elsewhere") {
		t.Error("the page says the segments and the timeline disagree; they agree")
	}
	bands := map[string]string{}
	for i, e := range els[:len(els)-1] {
		if hasClass(e, "band") {
			bands[els[i+1].text] = e.attrs["fill"]
		}
	}
	for i, e := range els[:len(els)-1] {
		if e.name == "rect" && hasClass(e, "piece") && strings.HasPrefix(els[i+1].text, "cuBLAS workspace:") {
			if fill := e.attrs["fill"]; fill == "" || fill != bands["cuBLAS workspace"] {
				t.Errorf("the workspace's piece is filled %q; want its band's colour %q", fill, bands["cuBLAS workspace"])
			}
		}
	}
	if n := len(bands); n != 4 {
		t.Errorf("%d bands %v; want the 3 sites and the workspace", n, bands)
	}
}

// Live memory that no event records (another runtime's, in a shared
// pool) is drawn as held elsewhere, in no site's colour, and the page says
// that the timeline does not show it.
func TestMemoryHeldElsewhereIsDrawnAsSuchNotAsASite(t *testing.T) {
	p := leakingRun()
	pc := &p.Snapshots[1].Segments[0].Pieces[4]
	pc.Live, pc.Site, pc.Holder = true, "other runtimes sharing the pool", HeldElsewhere
	page := writePage(t, p)
	els := parsePage(t, page)
	var drawn *element
	for i, e := range els[:len(els)-1] {
		if e.name == "rect" && hasClass(e, "piece") && strings.HasPrefix(els[i+1].text, "other runtimes sharing the pool:") {
			drawn = &els[i]
		}
	}
	if drawn == nil || !hasClass(*drawn, "elsewhere") || drawn.attrs["fill"] != "" {
		t.Fatalf("the piece held elsewhere is drawn %+v; want the class elsewhere and no site's fill", drawn)
	}
	caption := byID(els, "segments-oom-used")
	if caption == nil || caption.text != "Used: 57 MiB by arrays; 3.0 MiB held elsewhere, which the timeline does not show (other runtimes sharing the pool)." {
		t.Fatalf("the OOM's second caption line is %+v", caption)
	}
	if !strings.Contains(string(page), "held elsewhere: not in the timeline") {
		t.Error("the legend does not explain memory held elsewhere")
	}
}

// Segments that do not add up to the timeline's live bytes at their
// moment say so, rather than show two figures as if they agreed.
func TestSegmentsThatDisagreeWithTheTimelineSaySo(t *testing.T) {
	p := leakingRun()
	p.Snapshots[0].Live -= 4 * mib
	els := parsePage(t, writePage(t, p))
	caption := byID(els, "segments-peak-used")
	if caption == nil || caption.text != "The timeline has 53 MiB live at this moment, but its pieces here add up to 57 MiB." {
		t.Fatalf("the peak's second caption line is %+v", caption)
	}
}

// A limit set during the run starts where it was set.
func TestLimitSetLaterStartsWhereItWasSet(t *testing.T) {
	p := leakingRun()
	p.Limits = []Limits{{}, {Time: p.Duration / 2, Hard: 64 * mib}}
	els := parsePage(t, writePage(t, p))
	e := byID(els, "hard-limit")
	if e == nil || !strings.HasPrefix(e.attrs["d"], "M"+num(float64(tlLeft+tlRight)/2)+" ") {
		t.Fatalf("hard limit path %v; want it to start half way", e)
	}
}
