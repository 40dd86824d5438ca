package bindings

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// cudaRuntime is what the cuda module needs from a runtime.
type cudaRuntime interface {
	BackendName() string
	Device() (device.Info, error)
	Synchronize() error
	ToDevice(h *runtime.HostArray) (*runtime.Array, error)
	DeviceArray(shape []int, dt device.DType) (*runtime.Array, error)
	Zeros(shape []int, dt device.DType) (*runtime.Array, error)
	Full(shape []int, v float64, dt device.DType) (*runtime.Array, error)
	Rand(shape []int, dt device.DType, seed *uint64) (*runtime.Array, error)
	RandN(shape []int, dt device.DType, seed *uint64) (*runtime.Array, error)
	Seed(seed uint64)
	NewHostArray(shape []int, dt device.DType, pinned bool) (*runtime.HostArray, error)
	npyFiles
	giver
}

// npyFiles is what load_npy and the save_npy functions need of a runtime.
type npyFiles interface {
	FileAccess() error
	LoadNPY(path string, opts runtime.NPYOptions) (*runtime.HostArray, error)
	SaveNPY(path string, x runtime.AnyArray) error
	CreateNPY(path string, shape []int, dt device.DType) (*runtime.HostArray, error)
}

// cudaModule is the cuda module: devices, arrays, transfers (and the
// streams and events of streams.go). One method per Lua function; funcs
// is its table.
type cudaModule struct{ rt cudaRuntime }

func (m cudaModule) funcs() map[string]lua.LGFunction {
	return map[string]lua.LGFunction{
		"backend":      m.backend,
		"device":       m.device,
		"devices":      m.devices,
		"synchronize":  m.synchronize,
		"to_device":    m.toDevice,
		"device_array": m.deviceArray,
		"zeros":        m.zeros,
		"ones":         m.ones,
		"full":         m.full,
		"rand":         m.rand,
		"randn":        m.randn,
		"seed":         m.seed,
		"host_array":   m.hostArray,
		"load_npy":     m.loadNPY,
		"save_npy":     m.saveNPY,
		"create_npy":   m.createNPY,
	}
}

// openCuda is the loader of the cuda module.
func openCuda(rt *runtime.Runtime, L *lua.LState) int {
	registerArrayTypes(rt, L)
	registerStreamTypes(L)
	registerGraphType(L)
	mod := L.SetFuncs(L.NewTable(), cudaModule{rt}.funcs())
	L.SetFuncs(mod, streamsModule{rt}.funcs())
	L.SetFuncs(mod, graphsModule{rt}.funcs())
	L.Push(strictModule(L, "cuda", mod))
	return 1
}

func (m cudaModule) backend(L *lua.LState) int {
	L.Push(lua.LString(m.rt.BackendName()))
	return 1
}

func (m cudaModule) device(L *lua.LState) int {
	info, err := m.rt.Device()
	if err != nil {
		raise(L, "cuda.device", err)
	}
	L.Push(deviceTable(L, info))
	return 1
}

func (m cudaModule) devices(L *lua.LState) int {
	info, err := m.rt.Device()
	if err != nil {
		raise(L, "cuda.devices", err)
	}
	t := L.NewTable()
	t.Append(deviceTable(L, info))
	L.Push(t)
	return 1
}

func (m cudaModule) synchronize(L *lua.LState) int {
	if err := m.rt.Synchronize(); err != nil {
		raise(L, "cuda.synchronize", err)
	}
	return 0
}

func (m cudaModule) deviceArray(L *lua.LState) int {
	return m.newArray(L, "cuda.device_array", m.rt.DeviceArray)
}

func (m cudaModule) zeros(L *lua.LState) int { return m.newArray(L, "cuda.zeros", m.rt.Zeros) }

func (m cudaModule) ones(L *lua.LState) int {
	return m.newArray(L, "cuda.ones", func(shape []int, dt device.DType) (*runtime.Array, error) { return m.rt.Full(shape, 1, dt) })
}

func (m cudaModule) full(L *lua.LState) int {
	const name = "cuda.full"
	shape := checkShape(L, name, 1)
	v, ok := L.Get(2).(lua.LNumber)
	if !ok {
		argError(L, name, 2, "fill value must be a number, got %s", typeName(L.Get(2)))
	}
	dt := optDType(L, name, 3, device.Float32)
	a, err := m.rt.Full(shape, float64(v), dt)
	if err != nil {
		raise(L, name, err)
	}
	pushNew(L, m.rt, a)
	return 1
}

func (m cudaModule) rand(L *lua.LState) int { return m.random(L, "cuda.rand", m.rt.Rand) }

func (m cudaModule) randn(L *lua.LState) int { return m.random(L, "cuda.randn", m.rt.RandN) }

// random is cuda.rand and cuda.randn: (shape [, dtype [, seed]]).
func (m cudaModule) random(L *lua.LState, name string, draw func([]int, device.DType, *uint64) (*runtime.Array, error)) int {
	shape := checkShape(L, name, 1)
	dt := optDType(L, name, 2, device.Float32)
	var seed *uint64
	if L.Get(3) != lua.LNil {
		s := checkSeed(L, name, 3)
		seed = &s
	}
	a, err := draw(shape, dt, seed)
	if err != nil {
		raise(L, name, err)
	}
	pushNew(L, m.rt, a)
	return 1
}

// seed is cuda.seed(n): the unseeded cuda.rand and cuda.randn calls after
// it draw the same numbers in every run.
func (m cudaModule) seed(L *lua.LState) int {
	m.rt.Seed(checkSeed(L, "cuda.seed", 1))
	return 0
}

func checkSeed(L *lua.LState, name string, n int) uint64 {
	s := checkInt(L, name, n, "seed")
	if s < 0 {
		argError(L, name, n, "seed must be non-negative, got %d", s)
	}
	return uint64(s)
}

func (m cudaModule) hostArray(L *lua.LState) int {
	const name = "cuda.host_array"
	shape := checkShape(L, name, 1)
	dt := optDType(L, name, 2, device.Float32)
	opts := options(L, name, 3, "pinned")
	pinned := optBool(L, name, opts, "pinned", false)
	h, err := m.rt.NewHostArray(shape, dt, pinned)
	if err != nil {
		raise(L, name, err)
	}
	pushHost(L, h)
	return 1
}

func deviceTable(L *lua.LState, info device.Info) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("name", lua.LString(info.Name))
	t.RawSetString("index", lua.LNumber(info.Index))
	t.RawSetString("total_memory", lua.LNumber(info.TotalMemory))
	t.RawSetString("free_memory", lua.LNumber(info.FreeMemory))
	cc := "cpu"
	if info.ComputeCapability != [2]int{} {
		cc = fmt.Sprintf("%d.%d", info.ComputeCapability[0], info.ComputeCapability[1])
	}
	t.RawSetString("compute_capability", lua.LString(cc))
	t.RawSetString("multiprocessors", lua.LNumber(info.Multiprocessors))
	return t
}

// newArray is cuda.device_array, zeros and ones: (shape [, dtype]).
func (m cudaModule) newArray(L *lua.LState, name string, make func([]int, device.DType) (*runtime.Array, error)) int {
	shape := checkShape(L, name, 1)
	dt := optDType(L, name, 2, device.Float32)
	if L.GetTop() > 2 {
		argError(L, name, 3, "unexpected argument (%s takes shape and dtype)", name)
	}
	a, err := make(shape, dt)
	if err != nil {
		raise(L, name, err)
	}
	pushNew(L, m.rt, a)
	return 1
}

// toDevice is cuda.to_device(src [, dtype]): src is a (nested) table of
// numbers or a HostArray.
func (m cudaModule) toDevice(L *lua.LState) int {
	const name = "cuda.to_device"
	src := L.Get(1)
	var h *runtime.HostArray
	switch v := src.(type) {
	case *lua.LTable:
		dt := optDType(L, name, 2, device.Float32)
		var err error
		if h, err = tableToHost(v, dt); err != nil {
			argError(L, name, 1, "%s", err)
		}
	default:
		if h = toHost(L, 1); h == nil {
			if toArray(L, 1) != nil {
				argError(L, name, 1, "already a DeviceArray; use d:clone() for a copy")
			}
			argError(L, name, 1, "table or HostArray expected, got %s", typeName(src))
		}
		if dt := optDType(L, name, 2, h.DType()); dt != h.DType() {
			var err error
			if h, err = h.Convert(dt); err != nil {
				raise(L, name, err)
			}
		}
	}
	a, err := m.rt.ToDevice(h)
	if err != nil {
		raise(L, name, err)
	}
	pushNew(L, m.rt, a)
	return 1
}

// loadNPY is cuda.load_npy(path [, {mmap=false, pinned=false, writable=false}]).
func (m cudaModule) loadNPY(L *lua.LState) int {
	const name = "cuda.load_npy"
	path := checkPath(L, name, 1)
	opts := options(L, name, 2, "mmap", "pinned", "writable")
	o := runtime.NPYOptions{MMap: optBool(L, name, opts, "mmap", false), Pinned: optBool(L, name, opts, "pinned", false),
		Writable: optBool(L, name, opts, "writable", false)}
	if err := m.rt.FileAccess(); err != nil {
		raise(L, name, err)
	}
	h, err := m.rt.LoadNPY(path, o)
	if err != nil {
		raise(L, name, err)
	}
	pushHost(L, h)
	return 1
}

// createNPY is cuda.create_npy(path, shape [, dtype]): a zeroed .npy file
// mapped read-write.
func (m cudaModule) createNPY(L *lua.LState) int {
	const name = "cuda.create_npy"
	path := checkPath(L, name, 1)
	shape := checkShape(L, name, 2)
	dt := optDType(L, name, 3, device.Float32)
	if err := m.rt.FileAccess(); err != nil {
		raise(L, name, err)
	}
	h, err := m.rt.CreateNPY(path, shape, dt)
	if err != nil {
		raise(L, name, err)
	}
	pushHost(L, h)
	return 1
}

// saveNPY is cuda.save_npy(path, x): x a HostArray or a DeviceArray.
func (m cudaModule) saveNPY(L *lua.LState) int {
	const name = "cuda.save_npy"
	path := checkPath(L, name, 1)
	var x runtime.AnyArray
	if h := toHost(L, 2); h != nil {
		x = h
	} else if a := toArray(L, 2); a != nil {
		x = a
	} else {
		argError(L, name, 2, "HostArray or DeviceArray expected, got %s", typeName(L.Get(2)))
	}
	saveNPY(L, m.rt, name, path, x)
	return 0
}

// saveNPY is what cuda.save_npy and the arrays' save_npy methods share.
func saveNPY(L *lua.LState, rt npyFiles, name, path string, x runtime.AnyArray) {
	if err := rt.FileAccess(); err != nil {
		raise(L, name, err)
	}
	if err := rt.SaveNPY(path, x); err != nil {
		raise(L, name, err)
	}
}
