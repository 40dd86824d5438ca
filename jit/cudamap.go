package jit

import (
	"fmt"
	"strings"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

// mapLoop writes a kernels.map loop over the elements in the launch shape
// of the built-in elementwise kernels (dtypes.cu's units_first and
// units_step, kernels.ElementwiseShape's grid): each thread loads its
// round's units of every input array before it computes any, and arrays
// that fit are indexed with 32 bits. The loop variable still holds each
// element's 1-based index, which the CPU evaluator's For gives it, so a
// check or a trap inside the body sees what it sees there; a thread that
// traps ends, as it does in a loop of one element at a time.
func (e *emitter) mapLoop(st *For) {
	e.line("{")
	e.depth++
	e.line("const i64 glua_n = %s;", e.expr(st.Stop))
	if e.index != "" {
		e.mapUnits(st, e.index)
		e.depth--
		e.line("}")
		return
	}
	e.line("if (index32(glua_n)) {")
	e.depth++
	e.mapUnits(st, "u32")
	e.depth--
	e.line("} else {")
	e.depth++
	e.mapUnits(st, "i64")
	e.depth--
	e.line("}")
	e.depth--
	e.line("}")
}

// mapUnits is the loop with index type ix: over elements, or over
// 16-byte vectors and then the tail of fewer than a vector's elements.
func (e *emitter) mapUnits(st *For, ix string) {
	m := e.p.Map
	units := kernels.ElementsPerThread
	count := "(" + ix + ")glua_n"
	if e.lanes > 0 {
		units = kernels.VectorsPerThread
		e.line("const %s glua_nv = (%s)(glua_n / %d);", ix, ix, e.lanes)
		count = "glua_nv"
	}
	e.line("for (%s glua_b = units_first<%d, %s>(); glua_b < %s; glua_b += units_step<%d, %s>()) {", ix, units, ix, count, units, ix)
	e.depth++
	for _, a := range m.Inputs {
		if e.lanes > 0 {
			e.line("union { v16 v; %s e[%d]; } glua_%s[%d];", storage(a.DType), e.lanes, a.Name, units)
		} else {
			e.line("%s glua_%s[%d];", storage(a.DType), a.Name, units)
		}
	}
	e.unitLoop(ix, count, units, func() {
		for _, a := range m.Inputs {
			if e.lanes > 0 {
				e.line("glua_%s[glua_k].v = ((const v16*)%s)[glua_u];", a.Name, arrayName(a))
			} else {
				e.line("glua_%s[glua_k] = %s[glua_u];", a.Name, arrayName(a))
			}
		}
	})
	e.unitLoop(ix, count, units, func() {
		if e.lanes == 0 {
			e.mapElement(st, "(i64)glua_u + 1", "[glua_k]")
			return
		}
		e.line("union { v16 v; %s e[%d]; } glua_o;", storage(m.Out.DType), e.lanes)
		e.line("#pragma unroll")
		e.line("for (int glua_j = 0; glua_j < %d; glua_j++) {", e.lanes)
		e.depth++
		e.mapElement(st, fmt.Sprintf("(i64)glua_u * %d + glua_j + 1", e.lanes), "[glua_k].e[glua_j]")
		e.depth--
		e.line("}")
		e.line("((v16*)%s)[glua_u] = glua_o.v;", arrayName(m.Out))
	})
	e.depth--
	e.line("}")
	if e.lanes == 0 {
		return
	}
	// the last n mod lanes elements, one for each of the grid's first
	// threads (a block has more threads than a vector has lanes)
	e.line("{")
	e.depth++
	e.line("const %s glua_u = glua_nv * %d + (%s)blockIdx.x * (%s)blockDim.x + (%s)threadIdx.x;", ix, e.lanes, ix, ix, ix)
	e.line("if (glua_u < (%s)glua_n) {", ix)
	e.depth++
	e.line("%s = (i64)glua_u + 1;", e.local(st.Slot))
	e.stmts(st.Body)
	e.depth--
	e.line("}")
	e.depth--
	e.line("}")
}

// unitLoop writes the unrolled walk over a thread's units of one round,
// unit glua_u (glua_k of the round), body for each below count.
func (e *emitter) unitLoop(ix, count string, units int, body func()) {
	e.line("#pragma unroll")
	e.line("for (int glua_k = 0; glua_k < %d; glua_k++) {", units)
	e.depth++
	e.line("const %s glua_u = glua_b + (%s)glua_k * (%s)blockDim.x;", ix, ix, ix)
	e.line("if (glua_u < %s) {", count)
	e.depth++
	body()
	e.depth--
	e.line("}")
	e.depth--
	e.line("}")
}

// mapElement writes the loop's body for one element, whose 1-based index
// is index, reading each input from its loaded units (glua_<name><at>)
// and, over vectors, storing into glua_o.
func (e *emitter) mapElement(st *For, index, at string) {
	m := e.p.Map
	e.elements = map[*Array]string{}
	for _, a := range m.Inputs {
		e.elements[a] = "glua_" + a.Name + at
	}
	if e.lanes > 0 {
		e.elements[m.Out] = "glua_o.e[glua_j]"
	}
	defer func() { e.elements = nil }()
	e.line("%s = %s;", e.local(st.Slot), index)
	e.stmts(st.Body)
}

// wholeRun writes a map_reduce thread's run of groups of consecutive
// elements: where every input is 16-byte aligned, each input's groups are
// loaded as 16-byte vectors before any element is computed (a group
// starts a multiple of its lanes in, and is 16 bytes or more of each
// input); otherwise, and for the last, shorter run, one element at a time
// as the CPU evaluator runs them.
func (e *emitter) wholeRun(st *If, r *ReduceRuns) {
	aligned := make([]string, len(r.Inputs))
	for k, a := range r.Inputs {
		aligned[k] = "(u64)" + arrayName(a)
	}
	e.vectorIf(st, fmt.Sprintf("((%s) & 15) == 0", strings.Join(aligned, " | ")), func() {
		start := e.expr(r.Start)
		for _, a := range r.Inputs {
			vectors := r.Lanes * a.DType.Size() / 16 // a group's
			e.line("union { v16 v[%d]; %s e[%d]; } glua_%s;", r.Groups*vectors, storage(a.DType), r.Groups*r.Lanes, a.Name)
			for g := range r.Groups {
				for k := range vectors {
					e.line("glua_%s.v[%d] = ((const v16*)(%s + (%s - 1) + %d))[%d];", a.Name, g*vectors+k, arrayName(a), start, r.offset(g, 0), k)
				}
			}
		}
		e.elements = map[*Array]string{}
		for g := range r.Groups {
			for j := range r.Lanes {
				for _, a := range r.Inputs {
					e.elements[a] = fmt.Sprintf("glua_%s.e[%d]", a.Name, g*r.Lanes+j)
				}
				e.line("%s = %s;", e.local(r.Index), e.expr(&Arith{Op: "+", X: r.Start, Y: &Const{T: Int, I: r.offset(g, j)}, T: Int}))
				e.stmts(r.Element)
			}
		}
	})
}

// vectorIf writes st, a reduction's whole run, with a second way through
// its Then: where vectorCond holds at run time, vector writes the run
// from vector loads; otherwise Then runs one element at a time, as the
// CPU evaluator runs it.
func (e *emitter) vectorIf(st *If, vectorCond string, vector func()) {
	e.line("if (%s) {", e.expr(st.Cond))
	e.depth++
	if stop := e.stop(); stop != "" {
		e.line("%s", stop)
	}
	e.line("if (%s) {", vectorCond)
	e.depth++
	vector()
	e.elements = nil
	e.depth--
	e.line("}")
	e.block("else", st.Then)
	e.depth--
	e.line("}")
	if len(st.Else) > 0 {
		e.block("else", st.Else)
	}
}

// axisGroups writes an axis reduction's run of values whose threads take
// several elements at a time (AxisGroups): where the layout keeps each
// value's elements together and aligned and every input is aligned, each
// value's Width elements of each input are loaded at once, all of the
// run's before any is computed; otherwise one element at a time, as the
// CPU evaluator runs them.
func (e *emitter) axisGroups(st *If, g *AxisGroups) {
	unit := func(a *Array) (name string, size int) {
		switch n := g.Width * a.DType.Size(); {
		case n >= 16:
			return "v16", 16
		case n == 8:
			return "u64", 8
		}
		return "u32", 4
	}
	conds := []string{
		fmt.Sprintf("%s + %d <= %s", e.expr(g.O), g.Width-1, e.expr(g.M)),
		fmt.Sprintf("%s == 1", e.expr(g.OStride)),
		fmt.Sprintf("%s %% %d == 0", e.expr(g.KStride), g.Width),
	}
	if g.Inner {
		conds = []string{
			fmt.Sprintf("%s == 1", e.expr(g.KStride)),
			fmt.Sprintf("(%s - 1) %% %d == 0", e.expr(g.Start), g.Width),
		}
	}
	for _, a := range g.Inputs {
		_, size := unit(a)
		conds = append(conds, fmt.Sprintf("((u64)%s & %d) == 0", arrayName(a), size-1))
	}
	set := func(j int) {
		e.line("%s = %s;", e.local(g.K), e.expr(&Arith{Op: "+", X: g.C, Y: &Const{T: Int, I: int64(j) * g.Step}, T: Int}))
	}
	e.vectorIf(st, strings.Join(conds, " && "), func() {
		var halves []string // the float16 words, for the NaN check
		for j := range g.Rows {
			set(j)
			base := e.expr(g.Base)
			for _, a := range g.Inputs {
				typ, size := unit(a)
				words := g.Width * a.DType.Size() / size
				e.line("union { %s w[%d]; %s e[%d]; } glua_%s_%d;", typ, words, storage(a.DType), g.Width, a.Name, j)
				for w := range words {
					word := fmt.Sprintf("glua_%s_%d.w[%d]", a.Name, j, w)
					e.line("%s = ((const %s*)(%s + (%s - 1)))[%d];", word, typ, arrayName(a), base, w)
					if a.DType == device.Float16 {
						halves = append(halves, halfWords(typ, word)...)
					}
				}
			}
		}
		compute := func() {
			for j := range g.Rows {
				set(j)
				for p := range g.Width {
					e.elements = map[*Array]string{}
					for _, a := range g.Inputs {
						e.elements[a] = fmt.Sprintf("glua_%s_%d.e[%d]", a.Name, j, p)
					}
					e.stmts(g.Elements[p])
				}
			}
		}
		if len(halves) == 0 || !g.Inner {
			compute()
			return
		}
		// a float16 is NaN when its low 15 bits pass 0x7c00, which adding
		// 0x3ff carries into the top bit of its half of a 4-byte word.
		// Only the inner form's runs (at most eight elements a lane) are
		// written twice: the outer form's, of 64 float16s, ran 5-14%
		// slower so on an H200.
		for k, h := range halves {
			halves[k] = fmt.Sprintf("((%s & 0x7fff7fffu) + 0x03ff03ffu)", h)
		}
		e.line("if (((%s) & 0x80008000u) == 0) {", strings.Join(halves, " | "))
		e.depth++
		e.plainHalves = true
		compute()
		e.plainHalves = false
		e.depth--
		e.line("} else {")
		e.depth++
		compute()
		e.depth--
		e.line("}")
	})
}

// halfWords are the 4-byte words of a loaded word of type typ (u32, u64
// or v16) named word.
func halfWords(typ, word string) []string {
	switch typ {
	case "u64":
		return []string{"(u32)" + word, "(u32)(" + word + " >> 32)"}
	case "v16":
		return []string{word + ".x", word + ".y", word + ".z", word + ".w"}
	}
	return []string{word}
}
