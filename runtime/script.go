package runtime

import (
	"errors"
	"io"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/internal/lualimit"
)

// scriptPart is what the runtime keeps for the scripts it runs, apart
// from the Lua state itself (Runtime.L): where print writes, whether the
// sandbox keeps scripts off the host's files and how far they may then
// raise the pool's limits, the limit on the memory of their Lua values,
// the gate that lets one goroutine at a time run Lua, and the Go
// resources tied to userdata they hold. entries has its own lock; New
// sets the rest, which only the goroutine using the runtime touches
// afterwards (SetLimits changes ceiling, the sweep the resources).
type scriptPart struct {
	stdout io.Writer // print's
	// sandbox keeps scripts off the host's files (Options.Sandbox);
	// ceiling is then how far its scripts may raise the pool's limits.
	sandbox bool
	ceiling ceiling
	// luaMemory is the limit on the memory of the script's Lua values.
	luaMemory *lualimit.Memory
	// entries lets one goroutine at a time run Lua, and Close stop it.
	entries entries
	// resources are ReleaseWhenUnreachable's, by the userdata carrying
	// them.
	resources map[*lua.LUserData]*scriptResource
}

// A scriptResource is released once a walk of the Lua state, whose mark
// it does not carry, no longer reaches its userdata.
type scriptResource struct {
	mark    uint32
	release func() error
}

// holdResource ties release to ud, as reached by the walk marked mark.
func (s *scriptPart) holdResource(ud *lua.LUserData, mark uint32, release func() error) {
	if s.resources == nil {
		s.resources = map[*lua.LUserData]*scriptResource{}
	}
	s.resources[ud] = &scriptResource{mark: mark, release: release}
}

// reached marks ud's resource, if it has one, as reached by the walk
// marked mark.
func (s *scriptPart) reached(ud *lua.LUserData, mark uint32) {
	if r, ok := s.resources[ud]; ok {
		r.mark = mark
	}
}

// releaseUnreached releases the resources the complete walk marked mark
// did not reach. A release's error has no caller to go to: the resource is
// gone either way.
func (s *scriptPart) releaseUnreached(mark uint32) {
	for ud, r := range s.resources {
		if r.mark != mark {
			delete(s.resources, ud)
			_ = r.release()
		}
	}
}

// print is the script's print, writing to the runtime's stdout. As Lua
// 5.1's, it turns each value into text with the global tostring (a script
// may replace it), whose result must be a string or a number, and writes
// what it has before it raises that error.
func (s *scriptPart) print(L *lua.LState) int {
	top := L.GetTop()
	tostring := L.GetGlobal("tostring")
	if !lua51.Callable(L, tostring) {
		// Lua 5.1's call from C, which names no variable or position.
		L.Error(lua.LString("attempt to call a "+tostring.Type().String()+" value"), 0)
	}
	direct := lua51.IsTostring(tostring)
	var b strings.Builder
	for i := 1; i <= top; i++ {
		if direct {
			L.Push(lua51.ToString(L, L.Get(i)))
		} else {
			L.Push(tostring)
			L.Push(L.Get(i))
			L.Call(1, 1)
		}
		var text string
		switch v := L.Get(-1).(type) {
		case lua.LString:
			text = string(v)
		case lua.LNumber:
			text = lua51.NumberString(float64(v))
		default:
			io.WriteString(s.stdout, b.String())
			L.Error(lua.LString(lua51.Where(L, 1)+"'tostring' must return a string to 'print'"), 0)
		}
		L.Pop(1)
		if i > 1 {
			b.WriteByte('\t')
		}
		b.WriteString(text)
	}
	b.WriteByte('\n')
	io.WriteString(s.stdout, b.String())
	return 0
}

// ErrSandboxed refuses a script's file access in a sandboxed runtime.
var ErrSandboxed = errors.New("file access is disabled in the sandbox (Options.Sandbox)")

// FileAccess says whether scripts may read and write the host's files
// (cuda.load_npy, save_npy): ErrSandboxed under Options.Sandbox, which
// leaves out io and os for the same reason. Go code calling LoadNPY or
// SaveNPY itself is not limited.
func (rt *Runtime) FileAccess() error {
	if rt.script.sandbox {
		return ErrSandboxed
	}
	return nil
}

// ErrSandboxedCUDA refuses a script's raw CUDA C in a sandboxed runtime.
var ErrSandboxedCUDA = errors.New("raw CUDA C is disabled in the sandbox (Options.Sandbox): it could #include the host's files and reach any device memory; kernels.jit and kernels.map remain, with bounds checks on")

// UserCUDA says whether scripts may compile their own CUDA C
// (kernels.compile): ErrSandboxedCUDA under Options.Sandbox, since NVRTC
// resolves #include from the host's files and a raw kernel can read and
// write any device memory, other runtimes' included. Go code calling
// Compile itself is not limited.
func (rt *Runtime) UserCUDA() error {
	if rt.script.sandbox {
		return ErrSandboxedCUDA
	}
	return nil
}
