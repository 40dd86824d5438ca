package profile

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The page's style and script, inline in every page.
var (
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// maxTableRows bounds the table of sites; the timeline's bands and the
// first rows tell the story, and pool.report-style long lists belong
// elsewhere.
const maxTableRows = 25

// render makes the page. It is one document that parses as XML too (every
// element closed, the script in CDATA), so that a test can read it
// without an HTML parser.
func render(p *Profile) (string, error) {
	a, err := analyse(p)
	if err != nil {
		return "", err
	}
	s := timelineScale(a, p.Limits)
	title := p.Title
	if title == "" {
		title = "(untitled)"
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	b.WriteString(`<meta name="viewport" content="width=device-width, initial-scale=1"/>` + "\n")
	fmt.Fprintf(&b, "<title>Memory profile: %s</title>\n<style>%s</style>\n</head>\n", esc(title), pageCSS)
	b.WriteString(`<body data-rendered="pending">` + "\n")
	b.WriteString(`<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>` +
		`<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="6" height="6" fill="` + cachedColour + `"/><line x1="0" y1="0" x2="0" y2="6" stroke="#a8a8a8" stroke-width="2"/></pattern>` +
		`<pattern id="elsewhere" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)">` +
		`<rect width="6" height="6" fill="` + elsewhereColour + `"/><line x1="0" y1="0" x2="0" y2="6" stroke="#424a53" stroke-width="2"/></pattern>` +
		"</defs></svg>\n<main>\n")
	writeHeader(&b, p, a, title)
	b.WriteString(`<p id="script-error" class="error" hidden="hidden"></p>` + "\n")
	writeCards(&b, p, a)

	b.WriteString(`<section class="panel" id="timeline-panel">` + "\n")
	b.WriteString("<h2>Live memory by allocation site, and memory reserved by the pool <small>hover for the figures at a moment</small></h2>\n")
	if len(p.Events) == 0 {
		b.WriteString(`<p class="empty">No memory events were recorded.</p>` + "\n")
	}
	b.WriteString(`<div class="chart-box">` + "\n")
	writeTimeline(&b, p, a, s)
	b.WriteString(`<div id="tooltip" class="tooltip" hidden="hidden"></div></div>` + "\n")
	writeLegend(&b, p, a)
	b.WriteString("</section>\n")

	writeSnapshots(&b, p, a)
	writeSiteTable(&b, a)
	b.WriteString("<footer>A self-contained page: it loads nothing from the network.</footer>\n</main>\n")
	if err := writeScript(&b, a, s); err != nil {
		return "", err
	}
	b.WriteString("</body>\n</html>\n")
	return b.String(), nil
}

func writeHeader(b *strings.Builder, p *Profile, a *analysis, title string) {
	fmt.Fprintf(b, `<header><h1>Memory profile <span class="title">%s</span></h1>`, esc(title))
	var meta []string
	if !p.Created.IsZero() {
		meta = append(meta, p.Created.Format("2006-01-02 15:04:05 MST"))
	}
	if p.Device != "" {
		meta = append(meta, p.Device)
	}
	if p.Strategy != "" {
		meta = append(meta, "pool strategy "+p.Strategy)
	}
	meta = append(meta, duration(a.end)+" recorded", count(len(p.Events))+" events")
	fmt.Fprintf(b, `<p class="meta">%s</p></header>`+"\n", esc(strings.Join(meta, " · ")))
}

func writeCards(b *strings.Builder, p *Profile, a *analysis) {
	card := func(id, class, label, value, sub string) {
		fmt.Fprintf(b, `<div class="card%s" id="card-%s"><div class="label">%s</div><div class="value">%s</div><div class="sub">%s</div></div>`,
			class, id, label, esc(value), esc(sub))
	}
	b.WriteString(`<section class="cards">`)
	card("peak-live", "", "Peak live", size(a.peakLive), "at "+duration(a.peakLiveAt))
	card("peak-reserved", "", "Peak reserved", size(a.peakReserved), "held by the pool")
	card("allocations", "", "Allocations", count(a.allocs), count(a.frees)+" frees")
	var soft, hard uint64
	if n := len(p.Limits); n > 0 {
		soft, hard = p.Limits[n-1].Soft, p.Limits[n-1].Hard
	}
	card("hard-limit", "", "Hard limit", limitText(hard), "soft limit "+limitText(soft))
	oomSub := "none"
	class := ""
	if n := len(a.ooms); n > 0 {
		oomSub, class = "the last at "+duration(a.ooms[n-1].Time), " alert"
	}
	card("oom", class, "Out of memory", count(len(a.ooms)), oomSub)
	holding := 0
	for _, s := range a.sites {
		if s.live > 0 {
			holding++
		}
	}
	card("sites", "", "Allocation sites", count(len(a.sites)), count(holding)+" holding memory at the end")
	b.WriteString("</section>\n")
}

func limitText(n uint64) string {
	if n == 0 {
		return "none"
	}
	return size(n)
}

func writeLegend(b *strings.Builder, p *Profile, a *analysis) {
	b.WriteString(`<div class="legend" id="legend">`)
	for i, name := range a.bands {
		fmt.Fprintf(b, `<span class="key"><span class="swatch" style="background:%s"></span>%s</span>`, bandColour(i), esc(name))
	}
	b.WriteString(`<span class="key"><span class="swatch line"></span>reserved by the pool</span>`)
	var soft, hard bool
	for _, l := range p.Limits {
		soft, hard = soft || l.Soft > 0, hard || l.Hard > 0
	}
	if soft {
		b.WriteString(`<span class="key"><span class="swatch line soft"></span>soft limit</span>`)
	}
	if hard {
		b.WriteString(`<span class="key"><span class="swatch line hard"></span>hard limit</span>`)
	}
	if a.peakLive > 0 {
		b.WriteString(`<span class="key"><span class="swatch dot"></span>peak of live memory</span>`)
	}
	if len(a.ooms) > 0 {
		b.WriteString(`<span class="key"><span class="swatch line oom"></span>out-of-memory error</span>`)
	}
	b.WriteString("</div>\n")
}

func writeSnapshots(b *strings.Builder, p *Profile, a *analysis) {
	b.WriteString(`<section class="panel" id="segments-panel">` + "\n")
	b.WriteString("<h2>The pool's segments <small>each bar is memory drawn from the device, cut into live pieces (coloured by site, as in the timeline) and cached ones; free pieces too small for a request are fragmentation</small></h2>\n")
	if p.Strategy == "cuda" {
		b.WriteString(`<p class="empty">The driver's pool keeps the cache under strategy "cuda": only live arrays are drawn.</p>` + "\n")
	}
	if len(p.Snapshots) == 0 {
		b.WriteString(`<p class="empty">No moment was captured.</p>` + "\n")
	}
	band := map[string]int{}
	for _, s := range a.sites {
		band[s.name] = s.band
	}
	var oom *Snapshot
	for i := range p.Snapshots {
		if p.Snapshots[i].Name == SnapshotOOM {
			oom = &p.Snapshots[i]
		}
	}
	var own, elsewhere bool // for the legend
	for i := range p.Snapshots {
		snap := &p.Snapshots[i]
		u := useOf(snap, band)
		own, elsewhere = own || u.own > 0, elsewhere || u.elsewhere > 0
		switch snap.Name {
		case SnapshotPeak:
			note := duration(snap.Time) + ", " + size(snap.Live) + " live"
			if snap.Live < a.peakLive {
				note += "; the peak itself was " + size(a.peakLive) + " at " + duration(a.peakLiveAt)
			}
			if u.elsewhere > 0 {
				note += "; " + size(u.elsewhere) + " more held elsewhere"
			}
			fmt.Fprintf(b, "<h3>At the peak <small>%s</small></h3>\n", esc(note))
			if oom != nil && sameSegments(snap, oom) {
				fmt.Fprintf(b, `<p class="empty" id="segments-%s">The pool was as at the out-of-memory error, below.</p>`+"\n", slug(snap.Name))
				continue
			}
		case SnapshotOOM:
			fmt.Fprintf(b, "<h3>At the out-of-memory error <small>%s: %s asked for at %s</small></h3>\n",
				esc(duration(snap.Time)), esc(size(snap.Requested)), esc(siteName(snap.Site)))
		default:
			fmt.Fprintf(b, "<h3>%s <small>%s</small></h3>\n", esc(snap.Name), esc(duration(snap.Time)))
		}
		writeSegments(b, snap, band)
	}
	b.WriteString(`<div class="legend"><span class="key"><span class="swatch used"></span>used by live arrays</span>`)
	if own {
		b.WriteString(`<span class="key"><span class="swatch own"></span>used by the runtime itself, not by arrays</span>`)
	}
	if elsewhere {
		b.WriteString(`<span class="key"><span class="swatch elsewhere"></span>held elsewhere: not in the timeline</span>`)
	}
	b.WriteString(`<span class="key"><span class="swatch cached"></span>cached: freed, kept for reuse</span>` +
		`<span class="key"><span class="swatch free"></span>free: not drawn yet, within the limits</span></div>` + "\n")
	b.WriteString("</section>\n")
}

func writeSiteTable(b *strings.Builder, a *analysis) {
	b.WriteString(`<section class="panel">` + "\n<h2>Allocation sites <small>by the most each held at once</small></h2>\n")
	b.WriteString(`<table id="sites"><thead><tr><th></th><th>site</th><th>peak</th><th>arrays at peak</th><th>allocations</th><th>live at end</th></tr></thead><tbody>` + "\n")
	for i, s := range a.sites {
		if i == maxTableRows {
			break
		}
		arrays := count(s.arraysAtPeak)
		if s.holder == HeldByRuntime {
			arrays = "not arrays"
		}
		fmt.Fprintf(b, `<tr><td><span class="swatch" style="background:%s"></span></td><td class="site">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`+"\n",
			bandColour(s.band), esc(s.name), size(s.peak), arrays, count(s.allocs), size(s.live))
	}
	b.WriteString("</tbody></table>\n")
	if n := len(a.sites) - maxTableRows; n > 0 {
		fmt.Fprintf(b, `<p class="empty">and %s more</p>`+"\n", plural(n, "site", "sites"))
	}
	if len(a.sites) == 0 {
		b.WriteString(`<p class="empty">No array was allocated while recording.</p>` + "\n")
	}
	b.WriteString("</section>\n")
}

// pageData is what the script needs for the tooltips: the timeline's
// points and how the picture maps them.
type pageData struct {
	End      float64    `json:"end"` // seconds
	Width    float64    `json:"width"`
	X0       float64    `json:"x0"`
	X1       float64    `json:"x1"`
	Bands    []string   `json:"bands"`
	Colours  []string   `json:"colours"`
	T        []float64  `json:"t"`
	Live     [][]uint64 `json:"live"`
	Reserved []uint64   `json:"reserved"`
}

func writeScript(b *strings.Builder, a *analysis, s scale) error {
	d := pageData{End: s.end.Seconds(), Width: tlWidth, X0: tlLeft, X1: tlRight, Bands: a.bands}
	for i := range a.bands {
		d.Colours = append(d.Colours, bandColour(i))
	}
	for _, pt := range a.points {
		d.T = append(d.T, float64(pt.t)/float64(time.Second))
		d.Live = append(d.Live, pt.bands)
		d.Reserved = append(d.Reserved, pt.reserved)
	}
	js, err := json.Marshal(d)
	if err != nil {
		return err
	}
	// json.Marshal writes <, > and & as \u003c and so on, so the data can
	// close neither the script element nor the CDATA section.
	fmt.Fprintf(b, "<script>//<![CDATA[\nvar PROFILE = %s;\n%s//]]></script>\n", js, pageJS)
	return nil
}
