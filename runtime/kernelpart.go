package runtime

import (
	"sync"
	"sync/atomic"

	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/jit"
	"github.com/gluaproject/glua/kernels"
)

// kernelPart is what the runtime keeps of the kernels it runs over arrays:
// kernels.map's translations, so that a map written inline in a loop is
// parsed and compiled once, and the count of the temporaries that outputs
// partly overlapping an input took. Each field has its own lock: the
// translations' mutex, the counter's atomics.
type kernelPart struct {
	maps     mapKernels     // jitmap.go, jitmapreduce.go
	overlaps overlapCounter // overlap.go
}

// mapKernels caches kernels.map's translations: one jit.Function per
// function literal (a closure written inline in a loop is a new Lua value
// each time round but the same syntax tree), one variant per signature.
type mapKernels struct {
	mu  sync.Mutex
	fns map[*ast.FunctionExpr]*mapFunc

	infoOnce sync.Once
	sms      int // the device's multiprocessors, for the launch shape
	// the device's compute capability where the backend can set a
	// carveout, for kernels.ElementwiseResidency; zero where it cannot
	residencyCC [2]int
}

// device asks the backend once for what the launches depend on.
func (m *mapKernels) device(b Backend) {
	m.infoOnce.Do(func() {
		info, err := b.Info()
		if err != nil {
			return
		}
		m.sms = info.Multiprocessors
		if _, ok := b.(kernels.Carveouts); ok {
			m.residencyCC = info.ComputeCapability
		}
	})
}

// multiprocessors is the device's count; 0 (the shape's default) where
// the backend cannot say.
func (m *mapKernels) multiprocessors(b Backend) int {
	m.device(b)
	return m.sms
}

// residency is the dynamic shared memory a vector entry reading inputs
// arrays launches with and the carveout it prefers, as the built-in
// elementwise kernels' (a map is one of them, and HBM serves it as it
// serves them); 0, 0 where the backend cannot set one.
func (m *mapKernels) residency(b Backend, inputs int) (shared uint32, carveout int) {
	m.device(b)
	return kernels.ElementwiseResidency(m.residencyCC, inputs)
}

// function parses tree once.
func (m *mapKernels) function(tree *ast.FunctionExpr, chunk string) (*mapFunc, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mf, ok := m.fns[tree]; ok {
		return mf, nil
	}
	f, err := jit.ParseMap(tree, chunk)
	if err != nil {
		return nil, err
	}
	if m.fns == nil {
		m.fns = map[*ast.FunctionExpr]*mapFunc{}
	}
	mf := &mapFunc{fn: f, variants: map[string]*jitVariant{}}
	m.fns[tree] = mf
	return mf, nil
}

// overlapCounter counts the temporaries partial overlaps took, for
// OverlapTemporaries. Atomic: a host may read it while the runtime works.
type overlapCounter struct{ n, bytes atomic.Uint64 }

func (c *overlapCounter) count(nbytes uint64) {
	c.n.Add(1)
	c.bytes.Add(nbytes)
}

// temporaries are the count and the bytes of the temporaries taken.
func (c *overlapCounter) temporaries() (n, nbytes uint64) {
	return c.n.Load(), c.bytes.Load()
}
