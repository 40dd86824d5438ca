package luafuzz

import "slices"

// maxShrinkRuns bounds the runs one shrink may take: each is two processes.
const maxShrinkRuns = 150

// Shrink cuts p down while its mismatch stays of class c: it drops
// statements, then replaces expressions by their parts, until no single
// cut keeps the class. It changes p in place and returns the outcomes of
// the smallest program.
func Shrink(r Runner, p *Program, c Class) (want, got Outcome) {
	runs := 0
	last := p.Source()
	keeps := func() bool {
		src := p.Source()
		if src == last {
			// The cut was inside something already cut away.
			return false
		}
		runs++
		w, g, err := r.Run(p.Source())
		if err != nil || !slices.Contains(Classify(p, w, g), c) {
			return false
		}
		want, got, last = w, g, src
		return true
	}
	last = ""
	if !keeps() {
		return want, got
	}
	for progress := true; progress && runs < maxShrinkRuns; {
		progress = false
		// Statements first, the largest (outermost) first.
		for _, n := range nodes(p.root, stmt) {
			if runs >= maxShrinkRuns {
				break
			}
			n.cut = true
			if keeps() {
				progress = true
				continue
			}
			n.cut = false
		}
		for _, n := range nodes(p.root, expr) {
			if runs >= maxShrinkRuns {
				break
			}
			for _, s := range n.subexprs() {
				n.sub = s
				if keeps() {
					progress = true
					break
				}
				n.sub = nil
			}
		}
	}
	return want, got
}

// nodes lists the nodes of a kind as p is written now, outermost first.
func nodes(root *node, k kind) []*node {
	var out []*node
	root.walk(func(n *node) {
		if n.kind == k && n.sub == nil {
			out = append(out, n)
		}
	})
	return out
}
