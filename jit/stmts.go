package jit

import (
	"math"

	"github.com/gluaproject/glua/device"
)

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
	case *Atomic:
		return c.atomic(st)
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
			t.syncThreads()
			return next
		}
	case *SyncWarp:
		site := c.site("kernels.syncwarp", st.Line)
		return func(t *thread) flow {
			t.warp.exchange(t, site, 0, -1)
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

// atomic runs kernels.atomic_*: the operands converted to the element's
// dtype as a store converts them, then one indivisible update, and the
// old value into the local, if kept.
func (c *compiler) atomic(st *Atomic) stmtFn {
	at, d := c.element(st.Arr, st.Index, st.Line), st.Arr.DType
	update := atomicOp(st.Op, d)
	operand := c.elementBits(st.X, d)
	expected := func(*thread) uint64 { return 0 }
	if st.Expected != nil {
		expected = c.elementBits(st.Expected, d)
	}
	keep := c.keepOld(st.Slot, d)
	return func(t *thread) flow {
		e := expected(t)
		v := operand(t)
		b, i := at(t)
		old := atomicUpdate(d, b, i, func(old uint64) (uint64, bool) { return update(old, v, e) })
		keep(t, old)
		return next
	}
}

// elementBits evaluates x and converts it to an element of d's bits, as
// storeFloat and storeInt convert: floats into integers truncate and
// saturate, integers wrap.
func (c *compiler) elementBits(x Expr, d device.DType) func(*thread) uint64 {
	if d.IsFloat() {
		f := c.floatOf(x, computeType(d))
		if d == device.Float32 {
			return func(t *thread) uint64 { return uint64(math.Float32bits(float32(f(t)))) }
		}
		return func(t *thread) uint64 { return math.Float64bits(f(t)) }
	}
	var f intFn
	if x.Type() == Int {
		f = c.int(x)
	} else {
		g := c.float(x)
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		if d.Size() == 8 {
			lo, hi = math.MinInt64, math.MaxInt64
		}
		f = func(t *thread) int64 { return saturate(g(t), lo, hi) }
	}
	if d == device.Int32 {
		return func(t *thread) uint64 { return uint64(uint32(f(t))) }
	}
	return func(t *thread) uint64 { return uint64(f(t)) }
}

// keepOld stores an atomic's old element bits into the local slot as its
// compute type; a dropped value (slot -1) is not stored.
func (c *compiler) keepOld(slot int, d device.DType) func(*thread, uint64) {
	switch {
	case slot < 0:
		return func(*thread, uint64) {}
	case d == device.Float32:
		return func(t *thread, b uint64) { t.floats[slot] = float64(math.Float32frombits(uint32(b))) }
	case d == device.Float64:
		return func(t *thread, b uint64) { t.floats[slot] = math.Float64frombits(b) }
	case d == device.Int32:
		return func(t *thread, b uint64) { t.ints[slot] = int64(int32(uint32(b))) }
	}
	return func(t *thread, b uint64) { t.ints[slot] = int64(b) }
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
