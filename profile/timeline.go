package profile

import (
	"fmt"
	"strings"
	"time"
)

// The timeline's picture, in the SVG's own units (it scales to the page).
const (
	tlWidth, tlHeight = 1280, 420
	tlLeft, tlRight   = 84, tlWidth - 28
	tlTop, tlBottom   = 24, tlHeight - 46
)

// offScale is how far above the memory drawn a limit may be and still set
// the scale: a hard limit of the whole device over a run that used a
// sliver of it would flatten everything else.
const offScale = 4

// palette colours the top sites, in rank order; otherColour the rest.
// Tableau's ten less its red, which marks limits and errors here.
var palette = []string{"#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"}

const (
	otherColour  = "#bab0ac"
	cachedColour = "#d4d4d4"
	// elsewhereColour, hatched darker, is memory the timeline does not
	// show: unlike a site's colour it stands for nothing in it.
	elsewhereColour = "#8c959f"
)

func bandColour(band int) string {
	if band < len(palette) {
		return palette[band]
	}
	return otherColour
}

// scale maps time and bytes to the timeline's picture.
type scale struct {
	end  time.Duration
	top  float64 // bytes at the top of the plot
	step float64 // bytes between the size ticks
}

func (s scale) x(t time.Duration) float64 {
	if s.end <= 0 {
		return tlLeft
	}
	return tlLeft + float64(t)/float64(s.end)*(tlRight-tlLeft)
}

func (s scale) y(n uint64) float64 {
	return tlBottom - float64(n)/s.top*(tlBottom-tlTop)
}

// timelineScale chooses the size axis: the memory drawn and the limits
// that are within offScale of it.
func timelineScale(a *analysis, limits []Limits) scale {
	data := float64(max(a.peakLive, a.peakReserved))
	top := data
	for _, l := range limits {
		for _, v := range []uint64{l.Soft, l.Hard} {
			if v > 0 && (data == 0 || float64(v) <= offScale*data) {
				top = max(top, float64(v))
			}
		}
	}
	if top == 0 {
		top = 1 << 20
	}
	step := sizeStep(top * 1.08)
	top = (float64(int(top*1.08/step)) + 1) * step
	return scale{end: max(a.end, time.Millisecond), top: top, step: step}
}

// writeTimeline draws the timeline: the sites' live bytes as stacked
// bands, reserved bytes as a line, the limits across it, the peak and the
// out-of-memory errors marked.
func writeTimeline(b *strings.Builder, p *Profile, a *analysis, s scale) {
	fmt.Fprintf(b, `<svg id="timeline" class="chart" viewBox="0 0 %d %d" role="img" aria-label="live and reserved memory over time">`, tlWidth, tlHeight)
	b.WriteString("\n")
	writeAxes(b, s)
	b.WriteString(`<g id="bands">`)
	lower := make([]uint64, len(a.points))
	for band := range a.bands {
		upper := make([]uint64, len(a.points))
		for i, pt := range a.points {
			upper[i] = lower[i] + pt.bands[band]
		}
		fmt.Fprintf(b, `<path id="band-%d" class="band" fill="%s" d="%s"><title>%s</title></path>`,
			band, bandColour(band), bandPath(a.points, lower, upper, s), esc(a.bands[band]))
		lower = upper
	}
	b.WriteString("</g>\n")
	reserved := make([]uint64, len(a.points))
	for i, pt := range a.points {
		reserved[i] = pt.reserved
	}
	fmt.Fprintf(b, `<path id="reserved" class="reserved" d="%s"/>`+"\n", stepLine(a.points, reserved, s))
	writeLimit(b, "soft-limit", "soft limit", p.Limits, func(l Limits) uint64 { return l.Soft }, s, 0)
	writeLimit(b, "hard-limit", "hard limit", p.Limits, func(l Limits) uint64 { return l.Hard }, s, 1)
	writeMarks(b, a, s)
	fmt.Fprintf(b, `<line id="crosshair" x1="0" y1="%d" x2="0" y2="%d" visibility="hidden"/>`, tlTop, tlBottom)
	fmt.Fprintf(b, `<rect id="hover" x="%d" y="%d" width="%d" height="%d" fill="transparent"/>`, tlLeft, tlTop, tlRight-tlLeft, tlBottom-tlTop)
	b.WriteString("</svg>\n")
}

// writeAxes draws the grid, the ticks and their labels.
func writeAxes(b *strings.Builder, s scale) {
	b.WriteString(`<g class="axis">`)
	for v := 0.0; v <= s.top+s.step/2; v += s.step {
		y := s.y(uint64(v))
		fmt.Fprintf(b, `<line class="grid" x1="%d" y1="%s" x2="%d" y2="%s"/>`, tlLeft, num(y), tlRight, num(y))
		fmt.Fprintf(b, `<text class="tick" x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, tlLeft-8, num(y), size(uint64(v)))
	}
	endSec := s.end.Seconds()
	step := timeStep(endSec)
	for v := 0.0; v <= endSec*1.0001; v += step {
		x := s.x(time.Duration(v * float64(time.Second)))
		fmt.Fprintf(b, `<line class="tickmark" x1="%s" y1="%d" x2="%s" y2="%d"/>`, num(x), tlBottom, num(x), tlBottom+5)
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%d" text-anchor="middle">%s</text>`, num(x), tlBottom+20, seconds(time.Duration(v*float64(time.Second)), step))
	}
	fmt.Fprintf(b, `<line class="baseline" x1="%d" y1="%d" x2="%d" y2="%d"/>`, tlLeft, tlBottom, tlRight, tlBottom)
	fmt.Fprintf(b, `<text class="axis-title" x="%d" y="%d" text-anchor="middle">time since recording began</text>`, (tlLeft+tlRight)/2, tlHeight-6)
	b.WriteString("</g>\n")
}

// bandPath is the outline of one band: its upper edge forward in time,
// its lower edge back, each a step that holds its level until the next
// point.
func bandPath(pts []point, lower, upper []uint64, s scale) string {
	var d strings.Builder
	n := len(pts)
	for i := 0; i < n; i++ {
		x0, x1 := s.x(pts[i].t), s.x(pts[min(i+1, n-1)].t)
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%s %s L%s %s ", cmd, num(x0), num(s.y(upper[i])), num(x1), num(s.y(upper[i])))
	}
	for i := n - 1; i >= 0; i-- {
		x0, x1 := s.x(pts[i].t), s.x(pts[min(i+1, n-1)].t)
		fmt.Fprintf(&d, "L%s %s L%s %s ", num(x1), num(s.y(lower[i])), num(x0), num(s.y(lower[i])))
	}
	d.WriteString("Z")
	return d.String()
}

// stepLine is a line through values at the points, each held until the
// next.
func stepLine(pts []point, values []uint64, s scale) string {
	var d strings.Builder
	for i := range pts {
		x0, x1 := s.x(pts[i].t), s.x(pts[min(i+1, len(pts)-1)].t)
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%s %s L%s %s ", cmd, num(x0), num(s.y(values[i])), num(x1), num(s.y(values[i])))
	}
	return strings.TrimSpace(d.String())
}

// writeLimit draws one limit across the timeline, as it changed; a limit
// above the scale is a note at the top. row places the labels of the two
// limits apart.
func writeLimit(b *strings.Builder, id, name string, limits []Limits, get func(Limits) uint64, s scale, row int) {
	var d strings.Builder
	var above, first uint64
	var firstX, firstY float64
	for i, l := range limits {
		v := get(l)
		if v == 0 {
			continue
		}
		if float64(v) > s.top {
			above = v
			continue
		}
		end := s.end
		if i+1 < len(limits) {
			end = limits[i+1].Time
		}
		y := s.y(v)
		fmt.Fprintf(&d, "M%s %s L%s %s ", num(s.x(l.Time)), num(y), num(s.x(end)), num(y))
		if first == 0 {
			first, firstX, firstY = v, s.x(l.Time), y
		}
	}
	if d.Len() > 0 {
		fmt.Fprintf(b, `<path id="%s" class="limit %s" d="%s"/>`, id, id, strings.TrimSpace(d.String()))
		// At the limit's start, where a run's memory is usually lowest.
		fmt.Fprintf(b, `<text class="limit-label %s" x="%s" y="%s">%s %s</text>`+"\n", id, num(firstX+6), num(firstY-5), name, size(first))
	}
	if above > 0 {
		fmt.Fprintf(b, `<text id="%s-above" class="limit-label %s" x="%d" y="%d" text-anchor="end">%s %s, above the scale ↑</text>`+"\n",
			id, id, tlRight-4, tlTop-8+14*row, name, size(above))
	}
}

// writeMarks marks the peak of live memory and each out-of-memory error.
func writeMarks(b *strings.Builder, a *analysis, s scale) {
	lastLabel := -1e9
	for i, e := range a.ooms {
		x := s.x(e.Time)
		fmt.Fprintf(b, `<g class="oom" id="oom-%d"><title>out of memory at %s: %s asked for at %s</title>`, i+1, duration(e.Time), size(e.NBytes), esc(siteName(e.Site)))
		fmt.Fprintf(b, `<line x1="%s" y1="%d" x2="%s" y2="%d"/>`, num(x), tlTop, num(x), tlBottom)
		if x-lastLabel > 44 {
			fmt.Fprintf(b, `<text x="%s" y="%d" text-anchor="middle">OOM</text>`, num(x), tlTop-6)
			lastLabel = x
		}
		b.WriteString("</g>\n")
	}
	if a.peakLive == 0 {
		return
	}
	x, y := s.x(a.peakLiveAt), s.y(a.peakLive)
	anchor, dx := "start", 8.0
	if x > (tlLeft+tlRight)*0.7 {
		anchor, dx = "end", -8
	}
	fmt.Fprintf(b, `<g id="peak" class="peak"><title>peak of live memory: %s at %s</title>`, size(a.peakLive), duration(a.peakLiveAt))
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%d"/><circle cx="%s" cy="%s" r="4.5"/>`, num(x), num(y), num(x), tlBottom, num(x), num(y))
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="%s">peak %s at %s</text></g>`+"\n", num(x+dx), num(max(y-8, tlTop+12)), anchor, size(a.peakLive), duration(a.peakLiveAt))
}
