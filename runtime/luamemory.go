package runtime

import (
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/internal/lualimit"
)

// luaMemorySetting says how to change the Lua memory limit, for its
// error message.
const luaMemorySetting = "[lua] memory_limit, $GLUA_LUA_MEMORY_LIMIT, --lua-memory-limit or Options.LuaMemoryLimit"

// luaMemory is the limit on the memory of a runtime's Lua values: [lua]
// memory_limit, or by default the host's limit (smaller in a sandbox).
// Host arrays are on Go's heap too, but have a limit of their own.
func luaMemory(cfg config.Config, sandbox bool) (*lualimit.Memory, error) {
	limit, from, err := cfg.LuaMemoryLimit(sandbox)
	if err != nil {
		return nil, err
	}
	if origin := cfg.Origin("lua.memory_limit"); origin != "default" && from == "[lua] memory_limit" {
		from += " from " + origin
	}
	return &lualimit.Memory{
		Limit:   limit,
		From:    from,
		Setting: luaMemorySetting,
		NotLua:  func() uint64 { return uint64(max(0, hostArrayBytes.Load())) },
	}, nil
}
