package jit

import "github.com/gluaproject/glua/device"

// Program is a kernel in typed form: what CUDA emits and Run evaluates.
type Program struct {
	Name      string    // the CUDA entry
	Chunk     string    // the script the function came from
	Line      int       // where the function starts
	Signature Signature // the launch's argument types
	Params    []Param
	Locals    []Local  // every local of the function, shadowed ones included
	Shared    []*Array // kernels.shared arrays, one per block
	// LocalArrays are kernels.local_array arrays, one per thread.
	LocalArrays []*Array
	Funcs       []*Func // the functions Call expressions call
	Body        []Stmt
	// UsesSync is set when the body calls kernels.syncthreads, so that
	// the CPU runs a block's threads together.
	UsesSync bool
	// UsesWarp is set when it shuffles or calls kernels.syncwarp, so that
	// the CPU runs each warp's lanes in step.
	UsesWarp    bool
	CheckBounds bool // the GPU checks indices too (the CPU always does)
	// Traps are the errors an operation can raise while the kernel runs
	// (an integer % whose divisor may be 0), each with the message both
	// backends give; an Arith names its trap by number.
	Traps []*Error
	// Map is set on a kernels.map program (CheckMap): its loop over the
	// elements, which the CUDA C writes in the built-in elementwise
	// kernels' launch shape.
	Map *MapLoop
	// Runs is set on a map_reduce's first kernel (CheckMapReduce): the
	// layout of its threads' elements.
	Runs *ReduceRuns
	// AxisGroups is set on an axis reduction's first kernel whose
	// threads take several results each (CheckMapReduceAxis).
	AxisGroups *AxisGroups
}

// MapLoop is a kernels.map program's loop over the elements. Its body
// loads each of Inputs at the element's index into a local, computes,
// and stores the value into Out at the same index; the CPU evaluator runs
// it as the For it is. The CUDA C (CUDA) has two entries: Name, over
// elements, and, where every array has one element size, Name + "_vec"
// (VectorEntry), over 16-byte vectors, for a launch whose pointers are
// all 16-byte aligned.
type MapLoop struct {
	Loop   *For
	Out    *Array
	Inputs []*Array
}

// VectorEntry is the entry of p that moves 16-byte vectors, "" where p
// is no map or its arrays' element sizes differ.
func (p *Program) VectorEntry() string {
	if p.Map == nil || p.Map.lanes() == 0 {
		return ""
	}
	return p.Name + "_vec"
}

// lanes is the elements of a 16-byte vector when all the map's arrays
// share one element size, 0 otherwise.
func (m *MapLoop) lanes() int {
	size := m.Out.DType.Size()
	for _, a := range m.Inputs {
		if a.DType.Size() != size {
			return 0
		}
	}
	return 16 / size
}

// HasErrorRecord reports whether the translated entry takes an error
// record (ErrorSlots int64s) last, which the launch zeroes and reads back:
// with check_bounds, or when an operation can trap.
func (p *Program) HasErrorRecord() bool { return p.CheckBounds || len(p.Traps) > 0 }

// SharedBytes is the size of the program's kernels.shared arrays together,
// the static shared memory each block of its launch holds.
func (p *Program) SharedBytes() int {
	n := 0
	for _, a := range p.Shared {
		n += a.Size * a.DType.Size()
	}
	return n
}

// Func is a function of numbers a program calls (kernels.map_reduce's op
// when it is a Lua function, or a device function a kernel captures): its
// parameters and locals are slots of its own Locals, and Ret is its value.
// An op's body runs to the end (it has no Return); a device function's
// ends at a Return whose Values go into the slots Results (Ret reads the
// first), so it may give several values. It reads no arrays.
type Func struct {
	Name    string // the CUDA device function
	Params  []int
	Locals  []Local
	Body    []Stmt
	Ret     Expr
	Results []int // a device function's value slots, in order
}

// Param is one parameter: an array, or a number held in a local.
type Param struct {
	Name  string
	Array *Array // nil for a number
	Slot  int    // a number's local
}

// Local is one local variable; a slot of the typed form.
type Local struct {
	Name string
	Type Type
}

// Array is an array a kernel indexes: a parameter or a shared array.
type Array struct {
	Name   string
	DType  device.DType
	Rank   int
	Param  int // the parameter's index, or -1
	Shared int // the shared array's index, or -1
	Local  int // 1 + a local array's index in Program.LocalArrays; 0 for others
	Size   int // a shared or local array's number of elements
	Shape  []int
}

// Fixed reports whether the array's shape is part of the program (a
// shared or local array), rather than an argument's.
func (a *Array) Fixed() bool { return a.Shared >= 0 || a.Local > 0 }

// Expr is a typed expression. Every expression is free of side effects,
// so a translation may evaluate one twice (the bounds checks do).
type Expr interface{ Type() Type }

type (
	// Const is a literal of type T.
	Const struct {
		T Type
		I int64
		F float64
		B bool
	}
	LocalGet struct {
		Slot int
		T    Type
	}
	// Convert converts X to T (integers to floats, floats to floats).
	Convert struct {
		X Expr
		T Type
	}
	// Neg is -X.
	Neg struct{ X Expr }
	// Not is `not X` on a boolean.
	Not struct{ X Expr }
	// Arith is X op Y with op one of + - * / % ^, both of type T.
	// Integers wrap on overflow (two's complement, as NumPy's int64).
	Arith struct {
		Op   string
		X, Y Expr
		T    Type
		// Trap is, for an integer % whose divisor may be 0, 1 + the index
		// of its error in the program's Traps; 0 for every other Arith.
		Trap int
	}
	// Compare is X op Y, op one of == ~= < <= > >=, both of one type.
	Compare struct {
		Op   string
		X, Y Expr
	}
	// Logic is X and Y, X or Y, on booleans.
	Logic struct {
		Op   string
		X, Y Expr
	}
	// Load reads an element; Index holds 1-based integer indices, one per
	// dimension.
	Load struct {
		Arr   *Array
		Index []Expr
		Line  int
	}
	// Dim is A.shape[K+1]; K is 0-based.
	Dim struct {
		Arr *Array
		K   int
	}
	// Size is #A, the number of elements.
	Size struct{ Arr *Array }
	// Math is math.<Fn>(Args...) computed in T; floor and ceil return
	// integers, so T is Int for them. For frexp and modf, which return
	// two values, Second selects the second (frexp's integer exponent,
	// modf's fraction) instead of the first.
	Math struct {
		Fn     string
		Args   []Expr
		T      Type
		Second bool
		// Trap is, for floor and ceil of a float, 1 + the index of the
		// error raised where the result is not an int64 (NaN, an
		// infinity, beyond 2^63 in magnitude); 0 for every other Math.
		Trap int
	}
	// Grid is the 1-based global thread index along Axis (0: x, 1: y, 2: z).
	Grid struct{ Axis int }
	// GridSize is the number of threads of the grid along Axis.
	GridSize struct{ Axis int }
	// Thread is the 1-based index of the thread in its block along Axis,
	// and Block the 1-based index of its block; the language has no
	// names for them, kernels.map_reduce's programs use them.
	Thread struct{ Axis int }
	Block  struct{ Axis int }
	// BlockDim and GridDim are the block's threads and the grid's blocks
	// along Axis (CUDA's blockDim and gridDim).
	BlockDim struct{ Axis int }
	GridDim  struct{ Axis int }
	// Shfl is kernels.shfl_down(X, By) (Op "down") or kernels.shfl_xor(X,
	// By) (Op "xor"): X as the lane By places above (or the lane whose
	// number is this one's xor By) holds it, or this lane's own X where
	// that lane is past the warp's 32. Every running lane of the warp
	// reaches it together.
	Shfl struct {
		Op    string
		X, By Expr
		Line  int
	}
	// LaneID is the thread's 1-based lane in its warp: its linear index
	// in the block (x fastest) modulo 32, plus 1.
	LaneID struct{}
	// Call is Fn(Args...), each argument of its parameter's type; Fn is
	// one of the program's Funcs. Its value is Fn's first.
	Call struct {
		Fn   *Func
		Args []Expr
	}
)

func (e *Const) Type() Type    { return e.T }
func (e *LocalGet) Type() Type { return e.T }
func (e *Convert) Type() Type  { return e.T }
func (e *Neg) Type() Type      { return e.X.Type() }
func (e *Not) Type() Type      { return Bool }
func (e *Arith) Type() Type    { return e.T }
func (e *Compare) Type() Type  { return Bool }
func (e *Logic) Type() Type    { return Bool }
func (e *Load) Type() Type     { return computeType(e.Arr.DType) }
func (e *Dim) Type() Type      { return Int }
func (e *Size) Type() Type     { return Int }
func (e *Math) Type() Type     { return e.T }
func (e *Grid) Type() Type     { return Int }
func (e *GridSize) Type() Type { return Int }
func (e *Thread) Type() Type   { return Int }
func (e *Block) Type() Type    { return Int }
func (e *BlockDim) Type() Type { return Int }
func (e *GridDim) Type() Type  { return Int }
func (e *Call) Type() Type     { return e.Fn.Ret.Type() }
func (e *Shfl) Type() Type     { return e.X.Type() }
func (e *LaneID) Type() Type   { return Int }

// Stmt is a typed statement.
type Stmt interface{ stmt() }

type (
	// Set assigns X (already of the local's type) to a local.
	Set struct {
		Slot int
		X    Expr
	}
	// Store writes X into an element, converting it to the array's dtype.
	Store struct {
		Arr   *Array
		Index []Expr
		X     Expr
		Line  int
	}
	// Atomic is kernels.atomic_<Op>(Arr, i, X), Op one of add sub max min
	// exch cas (with Expected, atomic_cas(Arr, i, Expected, X)): one
	// indivisible read and write of the element, X and Expected converted
	// to its dtype as a store converts. The element's old value, of the
	// array's compute type, goes into the local Slot; -1 drops it.
	Atomic struct {
		Op       string
		Arr      *Array
		Index    []Expr
		X        Expr
		Expected Expr
		Slot     int
		Line     int
	}
	If struct {
		Cond       Expr
		Then, Else []Stmt
	}
	// For is Lua's numeric for: Start, Stop and Step are evaluated once,
	// in the loop variable's type, and the variable is a copy the body may
	// change without changing the count.
	For struct {
		Slot              int
		Start, Stop, Step Expr
		Body              []Stmt
	}
	While struct {
		Cond Expr
		Body []Stmt
	}
	// CallSet calls a device function and assigns each of its values to
	// a local of the value's type, in order: `local q, r = f(x)`.
	CallSet struct {
		Call  *Call
		Slots []int
	}
	Break struct{}
	// Return ends the kernel's thread, or a device function, whose Values
	// (of its results' types) go into the slots Results first.
	Return struct {
		Values  []Expr
		Results []int
	}
	SyncThreads struct{}
	// SyncWarp is kernels.syncwarp(): the barrier of the thread's warp.
	SyncWarp struct{ Line int }
)

func (*Set) stmt()         {}
func (*Store) stmt()       {}
func (*Atomic) stmt()      {}
func (*If) stmt()          {}
func (*For) stmt()         {}
func (*While) stmt()       {}
func (*CallSet) stmt()     {}
func (*Break) stmt()       {}
func (*Return) stmt()      {}
func (*SyncThreads) stmt() {}
func (*SyncWarp) stmt()    {}
