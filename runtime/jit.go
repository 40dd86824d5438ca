package runtime

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/jit"
)

// JITKernel is a Lua function in the kernel language (package jit). It is
// translated at its first launch for each signature: to CUDA C compiled by
// NVRTC on the cuda backend, to the jit evaluator on a host backend.
type JITKernel struct {
	rt   *Runtime
	fn   *jit.Function
	opts jit.Options

	mu       sync.Mutex
	variants map[string]*jitVariant // by signature
}

type jitVariant struct {
	prog   *jit.Program
	kernel *Kernel // nil on a host backend, and for a map
	// entries are a map's kernels, each a module of one entry
	// (jit.MapCUDA), compiled when a launch first needs it; guarded by
	// kernelPart's maps.mu.
	entries map[mapEntry]*Kernel
}

// mapEntry is which entry of a map a launch runs: over 16-byte vectors
// or over elements, with 64-bit indices or 32-bit ones; and the carveout
// its kernel prefers (mapKernels.residency), 0 for the driver's own.
type mapEntry struct {
	vector, wide bool
	carveout     int
}

// jitOptions are the NVRTC options of translated kernels: no contraction
// into fma, so that float32 work rounds as the CPU evaluator's does.
var jitOptions = []string{"--fmad=false"}

// JIT accepts a function's syntax tree as a kernel; chunk is the script it
// came from, for error messages. A construct outside the kernel language
// is an error now; types are checked at each new signature's first launch.
func (rt *Runtime) JIT(tree *ast.FunctionExpr, chunk string, o jit.Options) (*JITKernel, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	if o.Name != "" && !validIdent(o.Name) {
		return nil, fmt.Errorf("name %q is not a C identifier", o.Name)
	}
	if jit.PreludeNames()[o.Name] {
		return nil, fmt.Errorf("name %q is taken by a helper of the generated CUDA C; choose another", o.Name)
	}
	if _, host := rt.backend.(HostMemory); !host {
		if _, ok := rt.backend.(KernelCompiler); !ok {
			return nil, fmt.Errorf("Lua kernels need the cuda backend or a host backend; this runtime runs on %s", rt.backend.Name())
		}
	}
	if rt.script.sandbox {
		// A kernel's indices are the script's own: in the sandbox every
		// access is checked on the GPU too (the CPU always checks), so that
		// no kernel reaches memory outside its arguments.
		o.CheckBounds = true
	}
	scope := jit.Scope{Env: o.Env}
	if l, ok := rt.backend.(LaunchLimiter); ok {
		scope.SharedPerBlock = l.Limits().SharedPerBlock
	}
	f, err := jit.ParseIn(tree, chunk, scope)
	if err != nil {
		return nil, err
	}
	return &JITKernel{rt: rt, fn: f, opts: o, variants: map[string]*jitVariant{}}, nil
}

// Launch runs the kernel over cfg's grid. Each argument is an *Array or a
// float64; a number that is an integer is passed as one.
func (k *JITKernel) Launch(cfg LaunchConfig, args ...any) error {
	if err := cfg.check(k.rt); err != nil {
		return err
	}
	sig, err := k.signature(args)
	if err != nil {
		return err
	}
	v, err := k.variant(sig)
	if err != nil {
		return err
	}
	if err := cfg.checkLimits(k.rt, v.prog.SharedBytes()); err != nil {
		return err
	}
	if err := k.rt.recordable(v.prog); err != nil {
		return err
	}
	if v.kernel == nil {
		return k.runOnHost(v.prog, cfg, args)
	}
	return k.launchOnDevice(v, cfg, args)
}

func (k *JITKernel) signature(args []any) (jit.Signature, error) {
	if len(args) != len(k.fn.Params) {
		return nil, fmt.Errorf("the kernel at %s:%d takes %d arguments, got %d", k.fn.Chunk, k.fn.Line(), len(k.fn.Params), len(args))
	}
	sig := make(jit.Signature, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case *Array:
			if err := v.live(k.rt, "argument "+k.fn.Params[i]); err != nil {
				return nil, err
			}
			sig[i] = jit.Arg{Array: true, DType: v.dtype, Rank: len(v.shape)}
		case float64:
			sig[i] = jit.Arg{Float: v != math.Trunc(v) || math.Abs(v) > 1<<53}
		default:
			return nil, fmt.Errorf("argument %d (%s): a DeviceArray or a number is expected, got %s", i+1, k.fn.Params[i], describe(a))
		}
	}
	return sig, nil
}

// variant translates (and on the cuda backend compiles) the kernel for sig
// once; later launches with the same signature reuse it.
func (k *JITKernel) variant(sig jit.Signature) (*jitVariant, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	// the captured numbers are compiled in: a launch after the script
	// changed one compiles a variant of its own
	captured, err := jit.CaptureKey(k.fn)
	if err != nil {
		return nil, err
	}
	key := sig.String() + captured
	if v, ok := k.variants[key]; ok {
		return v, nil
	}
	prog, err := jit.Check(k.fn, sig, k.opts)
	if err != nil {
		return nil, err
	}
	if err := k.rt.checkStaticShared(prog); err != nil {
		return nil, err
	}
	v, err := k.rt.readyVariant(prog)
	if err != nil {
		return nil, err
	}
	k.variants[key] = v
	return v, nil
}

// checkStaticShared refuses a kernel whose kernels.shared arrays the
// device's compiler would refuse, before the cuda backend's compiler
// meets them and the CPU backend runs what the GPU cannot.
func (rt *Runtime) checkStaticShared(p *jit.Program) error {
	l, ok := rt.backend.(LaunchLimiter)
	if !ok {
		return nil
	}
	if err := l.Limits().CheckStaticShared(p.SharedBytes()); err != nil {
		return &jit.Error{Chunk: p.Chunk, Line: p.Line, Msg: "kernels.shared: " + err.Error()}
	}
	return nil
}

// readyVariant is prog ready to launch: as it is for a host backend, whose
// evaluator runs it, and translated to CUDA C and compiled (through the
// kernel cache) for one that compiles.
func (rt *Runtime) readyVariant(prog *jit.Program) (*jitVariant, error) {
	v := &jitVariant{prog: prog}
	if _, host := rt.backend.(HostMemory); host {
		return v, nil
	}
	if prog.Map != nil {
		v.entries = map[mapEntry]*Kernel{}
		return v, nil // runMap compiles the entry a launch needs
	}
	var err error
	v.kernel, err = rt.newKernel(rt.backend.(KernelCompiler), jit.CUDA(prog), prog.Name+".cu", prog.Name, jitOptions, jitParams(prog))
	if err != nil {
		return nil, err
	}
	return v, nil
}

// mapKernel is v's entry e, compiled the first time a launch needs it.
func (rt *Runtime) mapKernel(v *jitVariant, e mapEntry) (*Kernel, error) {
	maps := &rt.kernels.maps
	maps.mu.Lock()
	defer maps.mu.Unlock()
	if k, ok := v.entries[e]; ok {
		return k, nil
	}
	source, entry := jit.MapCUDA(v.prog, e.vector, e.wide)
	k, err := rt.newKernelCarveout(rt.backend.(KernelCompiler), source, v.prog.Name+".cu", entry, jitOptions, jitParams(v.prog), e.carveout)
	if err != nil {
		return nil, err
	}
	v.entries[e] = k
	return k, nil
}

// jitParams are the translated entry's parameters as Kernel checks them.
func jitParams(p *jit.Program) []Param {
	var params []Param
	decls := jit.ParamDecls(p)
	add := func(kind ParamKind, dt device.DType) {
		params = append(params, Param{Kind: kind, DType: dt, Decl: decls[len(params)]})
	}
	for _, prm := range p.Params {
		switch {
		case prm.Array != nil:
			add(ParamPointer, prm.Array.DType)
			for range prm.Array.Rank {
				add(ParamInt64, device.Invalid)
			}
		case p.Locals[prm.Slot].Type == jit.Int:
			add(ParamInt64, device.Invalid)
		default:
			add(ParamFloat64, device.Invalid)
		}
	}
	if p.HasErrorRecord() {
		add(ParamPointer, device.Int64)
	}
	return params
}

// launchOnDevice passes each array as its pointer and dimensions and,
// when the program takes one, an error record.
func (k *JITKernel) launchOnDevice(v *jitVariant, cfg LaunchConfig, args []any) error {
	var vals []any
	for _, a := range args {
		vals = append(vals, a)
		if arr, ok := a.(*Array); ok {
			for _, d := range arr.shape {
				vals = append(vals, float64(d))
			}
		}
	}
	return k.rt.launchRecorded(v.prog, v.kernel, cfg, vals, args)
}

// recordable refuses a graph capture of p when its launch reads back an
// error record, on every backend alike (the CPU's replay runs the same
// check), since a graph's work cannot wait for the device.
func (rt *Runtime) recordable(p *jit.Program) error {
	if !p.HasErrorRecord() {
		return nil
	}
	return rt.uncapturable("a kernel that reports errors from the device (check_bounds, or an integer % whose divisor may be 0)")
}

// launchRecorded launches k, an entry of p, with vals (each array followed by
// its dimensions) and, when its program takes an error record, a zeroed
// one last, which it reads back after the launch: a failure a thread
// recorded becomes the launch's error. args are the program's
// parameters, which a bounds error's array number counts.
func (rt *Runtime) launchRecorded(p *jit.Program, k *Kernel, cfg LaunchConfig, vals, args []any) error {
	if !p.HasErrorRecord() {
		return k.Launch(cfg, vals...)
	}
	rec, err := rt.Zeros([]int{jit.ErrorSlots}, device.Int64)
	if err != nil {
		return err
	}
	defer rec.Free()
	if cfg.Stream != nil {
		// the record was zeroed on the runtime's stream, and the kernel
		// runs on another: it must not meet the record before the zeros
		if err := rt.backend.StreamSynchronize(rt.streams.own); err != nil {
			return err
		}
	}
	if err := k.Launch(cfg, append(vals, rec)...); err != nil {
		return err
	}
	return recordedError(p, args, rec, cfg.Stream)
}

// recordedError waits for the work that wrote rec (queued on stream, or
// the runtime's own when nil) and returns the failure the record holds,
// nil when no thread failed.
func recordedError(p *jit.Program, args []any, rec *Array, stream *Stream) error {
	if stream != nil {
		if err := stream.Synchronize(); err != nil {
			return err
		}
	}
	got, err := rec.Float64s()
	if err != nil {
		return err
	}
	return recordError(p, args, got)
}

// recordError reads an error record: nil if no thread failed.
func recordError(p *jit.Program, args []any, rec []float64) error {
	switch rec[0] {
	case 0:
		return nil
	case jit.RecordTrap:
		if k := int(rec[1]); k >= 1 && k <= len(p.Traps) {
			return p.Traps[k-1]
		}
		return errors.New("a thread failed at an operation the record does not name")
	}
	n := int(rec[1])
	var arr *jit.Array
	var shape []int
	if n >= 1 && n <= len(p.Params) && n <= len(args) {
		if a, ok := args[n-1].(*Array); ok {
			arr, shape = p.Params[n-1].Array, a.Shape()
		}
	} else if k := n - len(p.Params) - 1; k >= 0 && k < len(p.Shared) {
		arr = p.Shared[k]
		shape = arr.Shape
	} else if k -= len(p.Shared); k >= 0 && k < len(p.LocalArrays) {
		arr = p.LocalArrays[k]
		shape = arr.Shape
	}
	if arr == nil {
		return errors.New("a thread was out of bounds, in an array the record does not name")
	}
	idx := make([]int64, arr.Rank)
	for i := range idx {
		idx[i] = int64(rec[3+i])
	}
	return jit.BoundsError(p, arr, int(rec[2]), idx, shape)
}

// runOnHost runs the evaluator on the arrays' host memory.
func (k *JITKernel) runOnHost(p *jit.Program, cfg LaunchConfig, args []any) error {
	mem := k.rt.backend.(HostMemory)
	vals := make([]any, len(args))
	for i, a := range args {
		if arr, ok := a.(*Array); ok {
			vals[i] = jit.HostArray{DType: arr.dtype, Shape: arr.Shape(), Data: mem.Bytes(arr.ptr(), arr.NBytes())}
		} else {
			vals[i] = a
		}
	}
	dims := func(d [3]uint32) [3]int { return [3]int{int(d[0]), int(d[1]), int(d[2])} }
	return k.rt.onHost(cfg.stream(k.rt), func() error { return jit.Run(p, dims(cfg.Grid), dims(cfg.Block), vals) }, kernelUses(p, args)...)
}

// kernelUses are the arrays among args as the kernel p reads and writes
// them, for the CPU backend's check of the streams' order.
func kernelUses(p *jit.Program, args []any) []device.Access {
	reads, writes := p.ArrayAccess()
	var uses []device.Access
	for i, a := range args {
		arr, ok := a.(*Array)
		if !ok || i >= len(reads) || !reads[i] && !writes[i] {
			continue
		}
		if writes[i] {
			uses = append(uses, arr.span().writes(p.Params[i].Name))
		} else {
			uses = append(uses, arr.span().reads(p.Params[i].Name))
		}
	}
	return uses
}
