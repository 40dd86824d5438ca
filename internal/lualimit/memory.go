package lualimit

import (
	"fmt"
	goruntime "runtime"
	"runtime/metrics"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/internal/lua51"
)

// Memory is a state's Lua memory limit.
type Memory struct {
	// Limit is the most bytes the state's Lua values may take; 0 means no
	// limit, and then only a single allocation larger than the machine's
	// available memory is refused.
	Limit uint64
	// From says where Limit came from ("[lua] memory_limit from
	// --lua-memory-limit", "the sandbox's default") and Setting how to
	// change it, for the message.
	From, Setting string
	// NotLua is how many bytes of Go's heap are not Lua values (a host's
	// arrays); nil means none.
	NotLua func() uint64

	sample []metrics.Sample
}

// registryKey holds a state's *Memory in its registry, where coroutines,
// which share the registry, find it too.
const registryKey = "glua.lualimit.memory"

// machineCheckBytes is the size from which an allocation is also checked
// against the machine's available memory, which costs a read of
// /proc/meminfo.
const machineCheckBytes = 16 << 20

func memoryOf(L *lua.LState) *Memory {
	if ud, ok := L.G.Registry.RawGetString(registryKey).(*lua.LUserData); ok {
		m, _ := ud.Value.(*Memory)
		return m
	}
	return nil
}

// heap is the bytes of Go's heap in objects, live or not yet swept.
func (m *Memory) heap() uint64 {
	if m.sample == nil {
		m.sample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	}
	metrics.Read(m.sample)
	if m.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return m.sample[0].Value.Uint64()
}

// used is what Lua values take now, by the heap.
func (m *Memory) used() uint64 {
	h := m.heap()
	if m.NotLua != nil {
		h -= min(h, m.NotLua())
	}
	return h
}

// Check raises "not enough memory" in L when nbytes more (0: none, a look
// as the script runs) would pass the limit once garbage is collected, or
// are more than the machine has available.
func (m *Memory) Check(L *lua.LState, nbytes uint64) {
	if m.Limit > 0 && nbytes > m.Limit {
		m.overLimit(L, nbytes, m.used())
	}
	if nbytes >= machineCheckBytes {
		if avail := config.AvailableMemory(); avail > 0 && nbytes > avail {
			L.Error(lua.LString(fmt.Sprintf("not enough memory: %s more is more than the machine has available (%s)",
				config.FormatSize(nbytes), config.FormatSize(avail))), 0)
		}
	}
	if m.Limit == 0 {
		return
	}
	if used := m.used(); used+nbytes <= m.Limit {
		return
	}
	// Garbage does not count: only what is still over after a collection.
	goruntime.GC()
	if used := m.used(); used+nbytes > m.Limit {
		m.overLimit(L, nbytes, used)
	}
}

// overLimit raises the error of a limit passed, with no position, as Lua
// 5.1's memory errors have none.
func (m *Memory) overLimit(L *lua.LState, nbytes, used uint64) {
	msg := "not enough memory: "
	if nbytes > 0 {
		msg += fmt.Sprintf("%s more would pass the Lua memory limit of %s, with %s in use",
			config.FormatSize(nbytes), config.FormatSize(m.Limit), config.FormatSize(used))
	} else {
		msg += fmt.Sprintf("Lua values take %s, past the Lua memory limit of %s",
			config.FormatSize(used), config.FormatSize(m.Limit))
	}
	msg += fmt.Sprintf(" (the limit is %s; set it with %s)", m.From, m.Setting)
	L.Error(lua.LString(msg), 0)
}

// Install holds L, and the coroutines it makes, to m, and wraps the
// library functions this package looks after (see the package comment);
// call it once lua51.Open and luac.Install have put their functions in
// place. A nil m installs only the deadline checks.
func Install(L *lua.LState, m *Memory) {
	if m != nil {
		L.G.Registry.RawSetString(registryKey, &lua.LUserData{Value: m})
	}
	wrapLibrary(L)
}

func init() {
	lua51.SetGrowthCheck(func(L *lua.LState, nbytes int) {
		if m := memoryOf(L); m != nil {
			m.Check(L, uint64(nbytes))
		}
	})
	installCounters()
}
