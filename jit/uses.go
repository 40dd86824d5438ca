package jit

// ArrayAccess says, for each of the program's parameters, whether the
// kernel reads elements of the array passed for it (a load, or an
// atomic, which reads and writes) and whether it writes them (a store or
// an atomic); both are false for a number, and for an array the kernel
// only measures (its shape and size are the launch's, not the device's).
// The CPU backend's check of the streams' order uses them: a kernel that
// reads an array another stream writes, with nothing ordering the two,
// is refused, as a GPU would read it half written. A device function
// reads no arrays (Func), so only its arguments are looked into.
func (p *Program) ArrayAccess() (reads, writes []bool) {
	w := accessWalk{reads: make([]bool, len(p.Params)), writes: make([]bool, len(p.Params))}
	w.stmts(p.Body)
	return w.reads, w.writes
}

type accessWalk struct{ reads, writes []bool }

// param marks arr's parameter, if it is one.
func (w *accessWalk) param(arr *Array, read, write bool) {
	if arr == nil || arr.Param < 0 || arr.Param >= len(w.reads) {
		return
	}
	w.reads[arr.Param] = w.reads[arr.Param] || read
	w.writes[arr.Param] = w.writes[arr.Param] || write
}

func (w *accessWalk) stmts(body []Stmt) {
	for _, s := range body {
		switch s := s.(type) {
		case *Set:
			w.expr(s.X)
		case *Store:
			w.param(s.Arr, false, true)
			w.exprs(s.Index)
			w.expr(s.X)
		case *Atomic:
			w.param(s.Arr, true, true)
			w.exprs(s.Index)
			w.expr(s.X)
			w.expr(s.Expected)
		case *If:
			w.expr(s.Cond)
			w.stmts(s.Then)
			w.stmts(s.Else)
		case *For:
			w.exprs([]Expr{s.Start, s.Stop, s.Step})
			w.stmts(s.Body)
		case *While:
			w.expr(s.Cond)
			w.stmts(s.Body)
		case *CallSet:
			w.expr(s.Call)
		case *Return:
			w.exprs(s.Values)
		}
	}
}

func (w *accessWalk) exprs(es []Expr) {
	for _, e := range es {
		w.expr(e)
	}
}

func (w *accessWalk) expr(e Expr) {
	if l, ok := e.(*Load); ok {
		w.param(l.Arr, true, false)
	}
	w.exprs(operands(e))
}

// operands are e's subexpressions: a load's indices, an operator's
// operands, a function's arguments.
func operands(e Expr) []Expr {
	switch e := e.(type) {
	case *Load:
		return e.Index
	case *Convert:
		return []Expr{e.X}
	case *Neg:
		return []Expr{e.X}
	case *Not:
		return []Expr{e.X}
	case *Arith:
		return []Expr{e.X, e.Y}
	case *Compare:
		return []Expr{e.X, e.Y}
	case *Logic:
		return []Expr{e.X, e.Y}
	case *Math:
		return e.Args
	case *Call:
		return e.Args
	case *Shfl:
		return []Expr{e.X, e.By}
	}
	return nil
}
