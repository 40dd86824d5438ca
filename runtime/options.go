package runtime

import (
	"context"
	"fmt"
	"io"

	"github.com/gluaproject/glua/config"
)

// Options configures a Runtime. Every config key has a field here; a zero
// field means "from the configuration", which is the first of ConfigFile,
// $GLUA_CONFIG, ./config.toml and ~/.config/glua/config.toml that exists,
// else the built-in defaults (config.Load), then overridden by the GLUA_*
// environment variables. Non-zero fields override both, as flags do.
type Options struct {
	// ConfigFile names the configuration file, like --config.
	ConfigFile string
	// Config, when set, is used as is instead of looking a file up; the
	// environment does not apply to it.
	Config *config.Config

	Backend    string // "auto", "cuda" or "cpu"
	MemoryPool string // "caching", "cuda" or "none"
	SoftLimit  string // size or percentage, e.g. "2GiB", "80%"
	HardLimit  string
	CPUMemory  string // capacity of the CPU backend
	// HostMemoryLimit caps the host memory of this runtime's host arrays
	// ([host] memory_limit): a size or a percentage of the machine's.
	HostMemoryLimit string
	// PinnedLimit caps this runtime's page-locked host memory, in use and
	// cached ([host] pinned_limit).
	PinnedLimit string
	CPUThreads  int
	Device      int // device index ([cuda] device): 0 is the first; the CPU backend has only 0
	Debug       bool
	// LuaCallDepth and LuaStackSlots bound how far a script's calls and
	// values may grow ([lua] call_depth and stack_slots).
	LuaCallDepth  int
	LuaStackSlots int
	// LuaMemoryLimit caps the memory the script's Lua values take ([lua]
	// memory_limit): a size, a percentage of the machine's memory, or
	// "none". Left to the configuration it is the host's limit, and under
	// Sandbox at most 1 GiB (config.SandboxLuaMemory).
	LuaMemoryLimit string

	// Shared, when set, makes the runtime draw on that backend and memory
	// pool, shared with other runtimes, instead of opening its own (see
	// Shared). SoftLimit and HardLimit (or the configuration's limits)
	// are then this runtime's quota within the shared pool. Backend,
	// MemoryPool, Device, CPUMemory and CPUThreads belong to the shared
	// pool: leave them zero; a value other than the shared pool's is an
	// error naming the field.
	Shared *Shared

	// Context cancels running Lua code: a cancelled or expired context stops
	// the script with an error at its next instruction, whose message is
	// the context's cause where it has one (context.WithTimeoutCause).
	// SetContext replaces it.
	Context context.Context
	// Sandbox leaves out os, io, dofile, loadfile and loading modules from
	// files: only safe libraries and the glua modules. Its scripts may
	// not raise the pool's limits past the host's (see ScriptSetLimits).
	Sandbox bool
	// Stdout receives print output; nil means os.Stdout.
	Stdout io.Writer
}

// nonZero is v as text, or "" for its type's zero value: the Options
// field was left to the configuration.
func nonZero[T comparable](v T) string {
	var zero T
	if v == zero {
		return ""
	}
	return fmt.Sprint(v)
}

// resolve merges the options over the configuration.
func (o Options) resolve(getenv func(string) string) (config.Config, error) {
	var c config.Config
	if o.Config != nil {
		c = *o.Config
	} else {
		var err error
		if c, err = config.Load(o.ConfigFile, getenv); err != nil {
			return c, err
		}
	}
	for _, f := range []struct{ field, key, value string }{
		{"Backend", "backend", o.Backend},
		{"MemoryPool", "pool.strategy", o.MemoryPool},
		{"SoftLimit", "pool.soft_limit", o.SoftLimit},
		{"HardLimit", "pool.hard_limit", o.HardLimit},
		{"CPUMemory", "cpu.memory", o.CPUMemory},
		{"HostMemoryLimit", "host.memory_limit", o.HostMemoryLimit},
		{"PinnedLimit", "host.pinned_limit", o.PinnedLimit},
		{"CPUThreads", "cpu.threads", nonZero(o.CPUThreads)},
		{"Device", "cuda.device", nonZero(o.Device)},
		{"Debug", "pool.debug", nonZero(o.Debug)},
		{"LuaCallDepth", "lua.call_depth", nonZero(o.LuaCallDepth)},
		{"LuaStackSlots", "lua.stack_slots", nonZero(o.LuaStackSlots)},
		{"LuaMemoryLimit", "lua.memory_limit", o.LuaMemoryLimit},
	} {
		if f.value == "" {
			continue
		}
		// The origin shows in --info, so that a host's choice is told
		// from the file's.
		if err := c.Set(f.key, f.value, "Options."+f.field); err != nil {
			return c, fmt.Errorf("Options.%s: %w", f.field, err)
		}
	}
	// Flags and options are checked like the file, but are not "in" it.
	src := c.Source
	c.Source = ""
	err := c.Validate()
	c.Source = src
	return c, err
}
