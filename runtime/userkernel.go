package runtime

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/kernels"
)

// ParamKind is the type of one kernel parameter as the launch passes it.
type ParamKind int

const (
	ParamPointer ParamKind = iota
	ParamFloat32
	ParamFloat64
	ParamInt32
	ParamUint32
	ParamInt64
	ParamUint64
)

// Param is one declared kernel parameter.
type Param struct {
	Kind ParamKind
	// DType is the element type a pointer parameter points to; Invalid for
	// void* and other types that accept an array of any dtype.
	DType device.DType
	// Decl is the declaration as written, for error messages.
	Decl string
}

// Kernel is user CUDA C compiled by NVRTC, ready to launch.
type Kernel struct {
	rt     *Runtime
	entry  string
	params []Param
	launch func(grid, block [3]uint32, shared uint32, s device.Stream, args ...any) error
}

// LaunchConfig is a kernel launch's geometry and stream.
type LaunchConfig struct {
	Grid, Block [3]uint32
	Shared      uint32
	Stream      *Stream // nil: the runtime's stream
}

// Compile compiles source with NVRTC (or finds it in the kernel cache) and
// returns its kernel entry. The parameter types come from signature when
// given (C declarations such as "float *y", "int n") and otherwise from the
// entry's own __global__ declaration in source. Launches check every
// argument against them, so a number never reaches a pointer parameter, a
// float never an int one, and an array never a pointer of another dtype.
func (rt *Runtime) Compile(source, entry string, options, signature []string) (*Kernel, error) {
	if err := rt.usable(); err != nil {
		return nil, err
	}
	cb, ok := rt.backend.(KernelCompiler)
	if !ok {
		return nil, fmt.Errorf("user CUDA kernels need the cuda backend; this runtime runs on %s", rt.backend.Name())
	}
	if !validIdent(entry) {
		return nil, fmt.Errorf("entry %q is not a C identifier", entry)
	}
	decls := signature
	if decls == nil {
		var err error
		if decls, err = declaredParams(source, entry); err != nil {
			return nil, err
		}
	}
	params := make([]Param, len(decls))
	for i, d := range decls {
		p, err := parseParam(d)
		if err != nil {
			return nil, fmt.Errorf("parameter %d: %w", i+1, err)
		}
		params[i] = p
	}
	return rt.newKernel(cb, source, entry+".cu", entry, options, params)
}

// newKernel compiles source as the module name (the backend caches
// modules by source, name and options, in memory and on disk) and wraps
// its entry with params.
func (rt *Runtime) newKernel(cb KernelCompiler, source, name, entry string, options []string, params []Param) (*Kernel, error) {
	return rt.newKernelCarveout(cb, source, name, entry, options, params, 0)
}

// newKernelCarveout is newKernel for a kernel that prefers a shared memory
// carveout of percent, where percent is above 0 and cb can set one
// (kernels.Carveouts).
func (rt *Runtime) newKernelCarveout(cb KernelCompiler, source, name, entry string, options []string, params []Param, percent int) (*Kernel, error) {
	opts := append([]string{}, options...)
	var launch kernels.LaunchFunc
	var err error
	if c, ok := cb.(kernels.Carveouts); ok && percent > 0 {
		launch, err = c.LauncherWithCarveout(source, name, opts, entry, percent)
	} else {
		launch, err = cb.Launcher(source, name, opts, entry)
	}
	if err != nil {
		return nil, err
	}
	return &Kernel{rt: rt, entry: entry, params: params, launch: launch}, nil
}

// Params are the kernel's parameters.
func (k *Kernel) Params() []Param { return append([]Param(nil), k.params...) }

// Launch runs the kernel. Each argument is an *Array (for pointer
// parameters) or a float64 (for numbers), checked against the declaration.
func (k *Kernel) Launch(cfg LaunchConfig, args ...any) error {
	if len(args) != len(k.params) {
		return fmt.Errorf("%s takes %d arguments (%s), got %d", k.entry, len(k.params), k.signature(), len(args))
	}
	if err := cfg.check(k.rt); err != nil {
		return err
	}
	if err := cfg.checkLimits(k.rt, 0); err != nil {
		return err
	}
	vals := make([]any, len(args))
	for i, a := range args {
		v, err := k.convert(k.params[i], a)
		if err != nil {
			return fmt.Errorf("argument %d (%s): %w", i+1, k.params[i].Decl, err)
		}
		vals[i] = v
	}
	return k.launch(cfg.Grid, cfg.Block, cfg.Shared, cfg.stream(k.rt), vals...)
}

// check refuses a zero dimension and a stream of another runtime.
func (cfg LaunchConfig) check(rt *Runtime) error {
	for _, d := range [][3]uint32{cfg.Grid, cfg.Block} {
		for _, v := range d {
			if v == 0 {
				return errors.New("grid and block dimensions must be at least 1")
			}
		}
	}
	if cfg.Stream != nil && cfg.Stream.rt != rt {
		return errors.New("the stream belongs to another runtime")
	}
	return nil
}

// checkLimits refuses a launch the device would refuse for a kernel with
// staticShared bytes of shared arrays (0 where only the backend knows
// them: it checks them again).
func (cfg LaunchConfig) checkLimits(rt *Runtime, staticShared int) error {
	l, ok := rt.backend.(LaunchLimiter)
	if !ok {
		return nil
	}
	return l.Limits().CheckLaunch(cfg.Grid, cfg.Block, cfg.Shared, staticShared)
}

// stream is the launch's stream: the configured one or the runtime's.
func (cfg LaunchConfig) stream(rt *Runtime) device.Stream {
	if cfg.Stream != nil {
		return cfg.Stream.handle
	}
	return rt.streams.own
}

func (k *Kernel) signature() string {
	d := make([]string, len(k.params))
	for i, p := range k.params {
		d[i] = p.Decl
	}
	return strings.Join(d, ", ")
}

func (k *Kernel) convert(p Param, a any) (any, error) {
	if p.Kind == ParamPointer {
		arr, ok := a.(*Array)
		if !ok {
			return nil, fmt.Errorf("a DeviceArray is expected, got %s", describe(a))
		}
		if err := arr.live(k.rt, "the array"); err != nil {
			return nil, err
		}
		if p.DType != device.Invalid && arr.dtype != p.DType {
			return nil, fmt.Errorf("the array is %s but the parameter points to %s", arr.dtype, p.DType)
		}
		return arr.ptr(), nil
	}
	v, ok := a.(float64)
	if !ok {
		return nil, fmt.Errorf("a number is expected, got %s", describe(a))
	}
	integer := func(lo, hi float64) error {
		if v != math.Trunc(v) || v < lo || v > hi {
			return fmt.Errorf("an integer in [%.0f, %.0f] is expected, got %s", lo, hi, lua51.NumberString(v))
		}
		return nil
	}
	switch p.Kind {
	case ParamFloat32:
		return float32(v), nil
	case ParamFloat64:
		return v, nil
	case ParamInt32:
		return int32(v), integer(math.MinInt32, math.MaxInt32)
	case ParamUint32:
		return uint32(v), integer(0, math.MaxUint32)
	case ParamInt64:
		return int64(v), integer(-(1 << 53), 1<<53)
	default:
		return uint64(v), integer(0, 1<<53)
	}
}

func describe(a any) string {
	switch a.(type) {
	case *Array:
		return "a DeviceArray"
	case float64:
		return "a number"
	case nil:
		return "nil"
	}
	return fmt.Sprintf("%T", a)
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func validIdent(s string) bool { return identRE.MatchString(s) }

// declaredParams finds `__global__ void entry(...)` in source and splits its
// parameter list.
func declaredParams(source, entry string) ([]string, error) {
	re := regexp.MustCompile(`__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?` + regexp.QuoteMeta(entry) + `\s*\(([^)]*)\)`)
	m := re.FindStringSubmatch(stripComments(source))
	if m == nil {
		return nil, fmt.Errorf("no `__global__ void %s(...)` in the source; pass {signature = {...}} to declare its parameters", entry)
	}
	list := strings.TrimSpace(m[1])
	if list == "" || list == "void" {
		return []string{}, nil
	}
	return strings.Split(list, ","), nil
}

var commentRE = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)

func stripComments(s string) string { return commentRE.ReplaceAllString(s, " ") }

// pointee maps C element types to dtypes; the 2-byte float types also
// accept unsigned short, which is how kernels without headers store them.
var pointee = map[string]device.DType{
	"float": device.Float32, "double": device.Float64,
	"__half": device.Float16, "half": device.Float16,
	"__nv_bfloat16": device.BFloat16, "nv_bfloat16": device.BFloat16,
	"int": device.Int32, "int32_t": device.Int32,
	"long long": device.Int64, "long long int": device.Int64, "int64_t": device.Int64,
	"unsigned char": device.Uint8, "uint8_t": device.Uint8,
}

var scalars = map[string]ParamKind{
	"float": ParamFloat32, "double": ParamFloat64,
	"int": ParamInt32, "int32_t": ParamInt32, "signed": ParamInt32, "signed int": ParamInt32,
	"unsigned": ParamUint32, "unsigned int": ParamUint32, "uint32_t": ParamUint32,
	"long long": ParamInt64, "long long int": ParamInt64, "int64_t": ParamInt64, "ptrdiff_t": ParamInt64,
	"unsigned long long": ParamUint64, "unsigned long long int": ParamUint64, "uint64_t": ParamUint64, "size_t": ParamUint64,
}

// parseParam reads one C parameter declaration ("const float *__restrict__ x").
func parseParam(decl string) (Param, error) {
	d := strings.TrimSpace(decl)
	p := Param{Decl: d}
	pointer := strings.Contains(d, "*")
	words := strings.FieldsFunc(strings.ReplaceAll(d, "*", " "), func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
	var typ []string
	for _, w := range words {
		switch w {
		case "const", "volatile", "__restrict__", "restrict", "__restrict":
			continue
		}
		typ = append(typ, w)
	}
	// The last word is the parameter's name when there is one besides the type.
	if len(typ) > 1 && validIdent(typ[len(typ)-1]) && !isTypeWord(typ[len(typ)-1]) {
		typ = typ[:len(typ)-1]
	}
	base := strings.Join(typ, " ")
	if pointer {
		p.Kind = ParamPointer
		p.DType = pointee[base] // void and unknown element types take any array
		return p, nil
	}
	kind, ok := scalars[base]
	if !ok {
		return p, fmt.Errorf("%q: unsupported parameter type %q (numbers: float, double, int, unsigned, long long, size_t...; arrays: any T*)", d, base)
	}
	p.Kind = kind
	return p, nil
}

func isTypeWord(w string) bool {
	switch w {
	case "int", "float", "double", "char", "short", "long", "unsigned", "signed", "void":
		return true
	}
	return strings.HasSuffix(w, "_t")
}
