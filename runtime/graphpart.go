package runtime

import "github.com/gluaproject/glua/device"

// graphPart is the runtime's graph capture and replay state. capture,
// replaying, stream and fork are touched only by the runtime's goroutine;
// live, pending, orphans and orphanN are guarded by the Runtime's mu, which
// the callers of the methods that read or change them hold.
type graphPart struct {
	// capture is the graph being recorded, nil when none is; replaying
	// counts the graphs running their function again (graph.go). stream
	// and fork are the stream graphs are recorded on and the event that
	// orders it after the runtime's stream, made on first use.
	capture   *capture
	replaying int
	stream    device.Stream
	fork      *Event
	// live are the live graphs; pending those the collector found
	// unreachable, for drain; orphans the bytes of freed arrays that only
	// graphs keep, orphanN how many arrays those are.
	live    map[*graphState]struct{}
	pending []*graphState
	orphans uint64
	orphanN int
}

// busy reports whether a graph is being captured or replayed by calling
// its function again: work that cannot be recorded is refused meanwhile.
func (g *graphPart) busy() bool { return g.capture != nil || g.replaying > 0 }

// orderStream is the stream memory is ordered by: own, the runtime's
// stream, except while a capture sends the work elsewhere.
func (g *graphPart) orderStream(own device.Stream) device.Stream {
	if c := g.capture; c != nil {
		return c.order
	}
	return own
}

// add counts st among the live graphs. The caller holds mu.
func (g *graphPart) add(st *graphState) {
	if g.live == nil {
		g.live = map[*graphState]struct{}{}
	}
	g.live[st] = struct{}{}
}

// remove drops st from the live graphs. The caller holds mu.
func (g *graphPart) remove(st *graphState) { delete(g.live, st) }

// all lists the live graphs. The caller holds mu.
func (g *graphPart) all() []*graphState {
	var all []*graphState
	for st := range g.live {
		all = append(all, st)
	}
	return all
}

// queue keeps st for drain to free. The caller holds mu.
func (g *graphPart) queue(st *graphState) { g.pending = append(g.pending, st) }

// takePending hands over the graphs queued for drain. The caller holds mu.
func (g *graphPart) takePending() []*graphState {
	p := g.pending
	g.pending = nil
	return p
}

// orphan counts size bytes of a freed array that only graphs keep; adopt
// uncounts them once no graph does. The caller holds mu.
func (g *graphPart) orphan(size uint64) {
	g.orphans += size
	g.orphanN++
}

func (g *graphPart) adopt(size uint64) {
	g.orphans -= size
	g.orphanN--
}

// memory is GraphMemory's answer. The caller holds mu.
func (g *graphPart) memory() (graphs int, held, orphaned uint64) {
	seen := map[*buffer]bool{}
	for st := range g.live {
		if st.replay != nil {
			continue // it holds nothing between launches
		}
		graphs++
		for _, b := range st.held {
			if !seen[b] {
				seen[b] = true
				held += b.blk.Size
			}
		}
	}
	return graphs, held, g.orphans
}
