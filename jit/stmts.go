package jit

import "math"

func (c *compiler) stmts(ss []Stmt) stmtFn {
	fns := make([]stmtFn, len(ss))
	for i, s := range ss {
		fns[i] = c.stmt(s)
	}
	return func(t *thread) flow {
		for _, f := range fns {
			if fl := f(t); fl != next {
				return fl
			}
		}
		return next
	}
}

func (c *compiler) stmt(s Stmt) stmtFn {
	switch st := s.(type) {
	case *Set:
		return c.set(st.Slot, st.X)
	case *Store:
		return c.store(st)
	case *AtomicAdd:
		return c.atomicAdd(st)
	case *If:
		cond, then, els := c.bool(st.Cond), c.stmts(st.Then), c.stmts(st.Else)
		return func(t *thread) flow {
			if cond(t) {
				return then(t)
			}
			return els(t)
		}
	case *While:
		cond, body := c.bool(st.Cond), c.stmts(st.Body)
		return func(t *thread) flow {
			for cond(t) {
				switch body(t) {
				case breakLoop:
					return next
				case returnKernel:
					return returnKernel
				}
			}
			return next
		}
	case *For:
		return c.forLoop(st)
	case *Break:
		return func(*thread) flow { return breakLoop }
	case *Return:
		return c.returnStmt(st)
	case *CallSet:
		return c.callSet(st)
	case *SyncThreads:
		return func(t *thread) flow {
			t.block.wait()
			return next
		}
	}
	panic("jit: no evaluation of a statement")
}

func (c *compiler) set(slot int, x Expr) stmtFn {
	switch x.Type() {
	case Int:
		f := c.int(x)
		return func(t *thread) flow { t.ints[slot] = f(t); return next }
	case Bool:
		f := c.bool(x)
		return func(t *thread) flow { t.bools[slot] = f(t); return next }
	}
	f := c.float(x)
	return func(t *thread) flow { t.floats[slot] = f(t); return next }
}

func (c *compiler) store(st *Store) stmtFn {
	at, d := c.element(st.Arr, st.Index, st.Line), st.Arr.DType
	if st.X.Type() == Int {
		f := c.int(st.X)
		return func(t *thread) flow {
			v := f(t)
			b, i := at(t)
			storeInt(d, b, i, v)
			return next
		}
	}
	f := c.float(st.X)
	return func(t *thread) flow {
		v := f(t)
		b, i := at(t)
		storeFloat(d, b, i, v)
		return next
	}
}

func (c *compiler) atomicAdd(st *AtomicAdd) stmtFn {
	at, d := c.element(st.Arr, st.Index, st.Line), st.Arr.DType
	if d.IsFloat() {
		f := c.floatOf(st.X, computeType(d))
		return func(t *thread) flow {
			v := f(t)
			b, i := at(t)
			atomicAddFloat(d, b, i, v)
			return next
		}
	}
	var f intFn
	if st.X.Type() == Int {
		f = c.int(st.X)
	} else {
		g := c.float(st.X)
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		if d.Size() == 8 {
			lo, hi = math.MinInt64, math.MaxInt64
		}
		f = func(t *thread) int64 { return saturate(g(t), lo, hi) }
	}
	return func(t *thread) flow {
		v := f(t)
		b, i := at(t)
		atomicAddInt(d, b, i, v)
		return next
	}
}

// floatOf evaluates a number of either kind as a float of type to: an
// integer rounds once, to to's precision, as C's conversion does.
func (c *compiler) floatOf(x Expr, to Type) floatFn {
	if x.Type() == Int {
		return c.float(&Convert{X: x, T: to})
	}
	return c.float(x)
}

// forLoop is Lua's numeric for, as the translation writes it.
func (c *compiler) forLoop(st *For) stmtFn {
	body, slot := c.stmts(st.Body), st.Slot
	if st.Start.Type() == Int {
		start, stop, step := c.int(st.Start), c.int(st.Stop), c.int(st.Step)
		return func(t *thread) flow {
			i, n, s := start(t), stop(t), step(t)
			for ; s > 0 && i <= n || s <= 0 && i >= n; i += s {
				t.ints[slot] = i
				if fl := body(t); fl == breakLoop {
					break
				} else if fl == returnKernel {
					return fl
				}
			}
			return next
		}
	}
	start, stop, step := c.float(st.Start), c.float(st.Stop), c.float(st.Step)
	single := st.Start.Type() == Float32
	return func(t *thread) flow {
		i, n, s := start(t), stop(t), step(t)
		for ; s > 0 && i <= n || s <= 0 && i >= n; i = advance(i, s, single) {
			t.floats[slot] = i
			if fl := body(t); fl == breakLoop {
				break
			} else if fl == returnKernel {
				return fl
			}
		}
		return next
	}
}

func advance(i, s float64, single bool) float64 {
	if single {
		return f32(i + s)
	}
	return i + s
}

// returnStmt ends the thread, or a device function after setting its
// values (its result slots, which no value reads).
func (c *compiler) returnStmt(st *Return) stmtFn {
	if len(st.Values) == 0 {
		return func(*thread) flow { return returnKernel }
	}
	sets := make([]stmtFn, len(st.Values))
	for i, v := range st.Values {
		sets[i] = c.set(st.Results[i], v)
	}
	return func(t *thread) flow {
		for _, s := range sets {
			s(t)
		}
		return returnKernel
	}
}
