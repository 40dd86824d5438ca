package runtime

import (
	"fmt"
	"sort"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// A Module is a Lua module the runtime preloads into every Lua state, so
// that `require(name)` finds it. The bindings package registers glua's
// modules (cuda, kernels, pool) from its init function, as
// database/sql drivers register themselves.
type Module struct {
	Name string
	Open func(rt *Runtime, L *lua.LState) int
}

var (
	modulesMu sync.Mutex
	modules   []Module
)

// RegisterModule adds a module preloaded by runtimes created afterwards.
// Registering a second module under a name, or one without a name or Open,
// panics, as sql.Register does: two packages claiming one name is a
// programming error, found when the program starts.
func RegisterModule(m Module) {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	if m.Name == "" || m.Open == nil {
		panic("runtime: RegisterModule of a module without a name or an Open function")
	}
	for _, old := range modules {
		if old.Name == m.Name {
			panic(fmt.Sprintf("runtime: RegisterModule called twice for module %q", m.Name))
		}
	}
	modules = append(modules, m)
}

// Modules lists the registered modules' names, sorted.
func Modules() []string {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	names := make([]string, len(modules))
	for i, m := range modules {
		names[i] = m.Name
	}
	sort.Strings(names)
	return names
}
