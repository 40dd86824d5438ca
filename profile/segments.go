package profile

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The segment picture's layout, in the SVG's units: a row per segment,
// its size on the left and what is in it on the right.
const (
	sgWidth          = 1280
	sgLabel          = 96                         // the size column
	sgNote           = 300                        // the column of what a segment holds
	sgBar            = sgWidth - sgLabel - sgNote // the widest segment's bar
	sgRow, sgRowGap  = 15, 5
	sgOverview       = 34 // the height of the bar of totals
	sgCaptionLine    = 18
	maxSegmentRows   = 40
	freeOverviewPart = 3 // free memory past this many times the reserved is drawn cut
)

// snapshotUse is what a snapshot's pieces add up to, by what holds them.
type snapshotUse struct {
	arrays, own, elsewhere uint64
	cached, largestFree    uint64
	// ownSites are what the runtime's own pieces are for, otherSites
	// who holds the pieces held elsewhere, each as first met.
	ownSites, otherSites []string
}

func (u *snapshotUse) used() uint64 { return u.arrays + u.own + u.elsewhere }

// drawnHolder is what the page says holds a live piece: a piece whose
// site no event names is not in the timeline, whatever holds it, and is
// drawn as held elsewhere rather than passed off as one of the sites.
func drawnHolder(pc Piece, siteBand map[string]int) Holder {
	if _, ok := siteBand[siteName(pc.Site)]; !ok {
		return HeldElsewhere
	}
	return pc.Holder
}

// useOf adds up snap's pieces.
func useOf(snap *Snapshot, siteBand map[string]int) snapshotUse {
	var u snapshotUse
	for _, seg := range snap.Segments {
		for _, pc := range seg.Pieces {
			if !pc.Live {
				u.cached += pc.Size
				u.largestFree = max(u.largestFree, pc.Size)
				continue
			}
			switch drawnHolder(pc, siteBand) {
			case HeldByArray:
				u.arrays += pc.Size
			case HeldByRuntime:
				u.own += pc.Size
				u.ownSites = addName(u.ownSites, siteName(pc.Site))
			default:
				u.elsewhere += pc.Size
				u.otherSites = addName(u.otherSites, siteName(pc.Site))
			}
		}
	}
	return u
}

// addName adds name to names if it is not there yet.
func addName(names []string, name string) []string {
	if slices.Contains(names, name) {
		return names
	}
	return append(names, name)
}

// writeSegments draws the pool at one moment: first a bar of its totals
// (used by arrays, by the runtime itself and by others, cached, and free
// to draw under the limits), then each segment as a bar of its pieces at a
// common scale, so that free memory in pieces too small to use is plain to
// see. At an out-of-memory error, a bar of the size asked for sits above
// the segments, to the same scale.
func writeSegments(b *strings.Builder, snap *Snapshot, siteBand map[string]int) {
	id := "segments-" + slug(snap.Name)
	u := useOf(snap, siteBand)
	unreserved := snap.unreserved()
	// The second caption line says what the used memory is, when it is
	// not all arrays or not all in the timeline.
	breakdown := usedBreakdown(snap, &u)

	rows := drawnSegments(snap.Segments)
	asked := snap.Name == SnapshotOOM && snap.Requested > 0
	y := 0
	height := sgOverview + 34 + (len(rows)+boolInt(asked))*(sgRow+sgRowGap) + 8
	if breakdown != "" {
		height += sgCaptionLine
	}
	if len(rows) < len(snap.Segments) {
		height += 22
	}
	if len(snap.Segments) == 0 {
		height += 24
	}
	fmt.Fprintf(b, `<svg id="%s" class="segments" viewBox="0 0 %d %d" role="img" aria-label="the pool's segments">`+"\n", id, sgWidth, height)

	// The totals: used, cached, free; free beyond a few times the
	// reserved memory is cut, or a large device would hide the rest.
	reserved := u.used() + u.cached
	shownFree, cut := unreserved, false
	if reserved > 0 && unreserved > freeOverviewPart*reserved {
		shownFree, cut = freeOverviewPart*reserved, true
	}
	whole := float64(max(reserved+shownFree, 1))
	x := 0.0
	b.WriteString(`<g class="overview">`)
	for _, part := range []struct {
		class, label, title string
		n, shown            uint64
	}{
		{"used", "arrays", "used by live arrays", u.arrays, u.arrays},
		{"own", "runtime", "used by the runtime itself: " + strings.Join(u.ownSites, ", "), u.own, u.own},
		{"elsewhere", "elsewhere", "held elsewhere, not in the timeline: " + strings.Join(u.otherSites, ", "), u.elsewhere, u.elsewhere},
		{"cached", "cached", "cached: freed, kept by the pool", u.cached, u.cached},
		{"free", "free", "free: the pool may still draw it", unreserved, shownFree},
	} {
		if part.shown == 0 {
			continue
		}
		w := float64(part.shown) / whole * sgWidth
		fmt.Fprintf(b, `<rect class="%s" x="%s" y="%d" width="%s" height="%d"><title>%s: %s</title></rect>`,
			part.class, num(x), y, num(w), sgOverview, esc(part.title), size(part.n))
		label := part.label + " " + size(part.n)
		if part.class == "free" && cut {
			label += " (not to scale)"
		}
		if w > float64(7*len(label)) {
			fmt.Fprintf(b, `<text class="on-%s" x="%s" y="%d">%s</text>`, part.class, num(x+8), y+sgOverview/2+5, esc(label))
		}
		x += w
	}
	if cut {
		fmt.Fprintf(b, `<path class="cut" d="M%d %d l-6 %d l6 %d l-6 %d"/>`, sgWidth-1, y, sgOverview/3, sgOverview/3, sgOverview/3)
	}
	b.WriteString("</g>\n")
	y += sgOverview + 22
	largest := ""
	if u.cached > 0 {
		largest = " (the largest free block " + size(u.largestFree) + ")"
	}
	fmt.Fprintf(b, `<text class="caption" x="0" y="%d">%s reserved in %s: %s used, %s cached%s; %s more free to draw%s</text>`+"\n",
		y-6, size(reserved), plural(len(snap.Segments), "segment", "segments"), size(u.used()), size(u.cached), largest, size(unreserved), limitNote(snap))
	if breakdown != "" {
		y += sgCaptionLine
		fmt.Fprintf(b, `<text class="caption" id="%s-used" x="0" y="%d">%s</text>`+"\n", id, y-6, esc(breakdown))
	}
	y += 12

	widest := uint64(1)
	for _, seg := range rows {
		widest = max(widest, seg.Size)
	}
	if asked {
		widest = max(widest, snap.Requested)
	}
	w := func(n uint64) float64 { return float64(n) / float64(widest) * sgBar }
	if asked {
		fmt.Fprintf(b, `<g class="asked"><text class="row-label" x="%d" y="%d" text-anchor="end">asked for</text>`, sgLabel-10, y+sgRow-4)
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%s" height="%d"><title>the allocation that failed: %s at %s</title></rect>`,
			sgLabel, y, num(w(snap.Requested)), sgRow, size(snap.Requested), esc(siteName(snap.Site)))
		fmt.Fprintf(b, `<text class="note" x="%d" y="%d">%s, the request that failed</text></g>`+"\n", sgLabel+sgBar+12, y+sgRow-4, size(snap.Requested))
		y += sgRow + sgRowGap
	}
	if len(snap.Segments) == 0 {
		fmt.Fprintf(b, `<text class="note" x="0" y="%d">The pool held no memory.</text>`+"\n", y+14)
	}
	for i, seg := range rows {
		fmt.Fprintf(b, `<g class="segment" id="%s-%d">`, id, i+1)
		fmt.Fprintf(b, `<text class="row-label" x="%d" y="%d" text-anchor="end">%s</text>`, sgLabel-10, y+sgRow-4, size(seg.Size))
		var arrays, others int
		var own []string
		var free, hole uint64
		for _, pc := range seg.Pieces {
			px := sgLabel + w(pc.Offset)
			if !pc.Live {
				free += pc.Size
				hole = max(hole, pc.Size)
				fmt.Fprintf(b, `<rect class="piece cached" x="%s" y="%d" width="%s" height="%d"><title>cached: %s</title></rect>`,
					num(px), y, num(w(pc.Size)), sgRow, size(pc.Size))
				continue
			}
			name := siteName(pc.Site)
			switch drawnHolder(pc, siteBand) {
			case HeldElsewhere:
				others++
				fmt.Fprintf(b, `<rect class="piece used elsewhere" x="%s" y="%d" width="%s" height="%d"><title>%s: %s, not in the timeline</title></rect>`,
					num(px), y, num(w(pc.Size)), sgRow, esc(name), size(pc.Size))
				continue
			case HeldByRuntime:
				own = addName(own, name)
			default:
				arrays++
			}
			fmt.Fprintf(b, `<rect class="piece used" x="%s" y="%d" width="%s" height="%d" fill="%s"><title>%s: %s</title></rect>`,
				num(px), y, num(w(pc.Size)), sgRow, bandColour(siteBand[name]), esc(name), size(pc.Size))
		}
		fmt.Fprintf(b, `<rect class="outline" x="%d" y="%d" width="%s" height="%d"/>`, sgLabel, y, num(w(seg.Size)), sgRow)
		var note []string
		if arrays > 0 || (len(own) == 0 && others == 0) {
			note = append(note, plural(arrays, "array", "arrays"))
		}
		note = append(note, own...)
		if others > 0 {
			note = append(note, plural(others, "block", "blocks")+" held elsewhere")
		}
		if free > 0 {
			note = append(note, fmt.Sprintf("%s cached (largest %s)", size(free), size(hole)))
		}
		fmt.Fprintf(b, `<text class="note" x="%d" y="%d">%s</text></g>`+"\n", sgLabel+sgBar+12, y+sgRow-4, esc(strings.Join(note, ", ")))
		y += sgRow + sgRowGap
	}
	if n := len(snap.Segments) - len(rows); n > 0 {
		var rest uint64
		for _, seg := range snap.Segments {
			rest += seg.Size
		}
		for _, seg := range rows {
			rest -= seg.Size
		}
		fmt.Fprintf(b, `<text class="note" x="%d" y="%d">and %s more (%s), smaller than these, not drawn</text>`+"\n",
			sgLabel, y+12, plural(n, "segment", "segments"), size(rest))
	}
	b.WriteString("</svg>\n")
}

// usedBreakdown says, when the used memory is not all arrays of the
// timeline, what else it is; and when the pieces the timeline accounts
// for do not add up to its live bytes at the moment, that they do not. It
// is "" when there is nothing to say.
func usedBreakdown(snap *Snapshot, u *snapshotUse) string {
	var parts []string
	if u.own > 0 || u.elsewhere > 0 {
		parts = append(parts, size(u.arrays)+" by arrays")
	}
	if u.own > 0 {
		parts = append(parts, size(u.own)+" by the runtime itself, not arrays ("+strings.Join(u.ownSites, ", ")+")")
	}
	if u.elsewhere > 0 {
		parts = append(parts, size(u.elsewhere)+" held elsewhere, which the timeline does not show ("+strings.Join(u.otherSites, ", ")+")")
	}
	var s string
	if len(parts) > 0 {
		s = "Used: " + strings.Join(parts, "; ") + "."
	}
	if recorded := u.arrays + u.own; recorded != snap.Live {
		if s != "" {
			s += " "
		}
		s += fmt.Sprintf("The timeline has %s live at this moment, but its pieces here add up to %s.", size(snap.Live), size(recorded))
	}
	return s
}

// drawnSegments is the segments drawn, in address order: all of them, or
// the largest maxSegmentRows.
func drawnSegments(segs []Segment) []Segment {
	if len(segs) <= maxSegmentRows {
		return segs
	}
	idx := make([]int, len(segs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return segs[idx[i]].Size > segs[idx[j]].Size })
	idx = idx[:maxSegmentRows]
	sort.Ints(idx)
	out := make([]Segment, len(idx))
	for i, k := range idx {
		out[i] = segs[k]
	}
	return out
}

// limitNote says what bounds the free memory.
func limitNote(s *Snapshot) string {
	switch {
	case s.Hard > 0:
		return " under the hard limit of " + size(s.Hard)
	case s.DeviceTotal > 0:
		return " on a device of " + size(s.DeviceTotal)
	}
	return ""
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sameSegments says two snapshots show the same pool: the peak's and an
// out-of-memory error's are often one moment, drawn once.
func sameSegments(a, b *Snapshot) bool {
	if a.Live != b.Live || len(a.Segments) != len(b.Segments) {
		return false
	}
	for i, s := range a.Segments {
		t := b.Segments[i]
		if s.Address != t.Address || s.Size != t.Size || len(s.Pieces) != len(t.Pieces) {
			return false
		}
		for j, p := range s.Pieces {
			if p != t.Pieces[j] {
				return false
			}
		}
	}
	return true
}
