package runtime

import (
	"context"
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
	Device      int // CUDA device ordinal (as in config, 0 is the first)
	Debug       bool
	// LuaCallDepth and LuaStackSlots bound how far a script's calls and
	// values may grow ([lua] call_depth and stack_slots).
	LuaCallDepth  int
	LuaStackSlots int

	// Shared, when set, makes the runtime draw on that backend and memory
	// pool, shared with other runtimes, instead of opening its own (see
	// Shared). SoftLimit and HardLimit (or the configuration's limits)
	// are then this runtime's quota within the shared pool. Backend,
	// MemoryPool, Device, CPUMemory and CPUThreads belong to the shared
	// pool: leave them zero; a value other than the shared pool's is an
	// error naming the field.
	Shared *Shared

	// Context cancels running Lua code: a cancelled or expired context stops
	// the script with an error at its next instruction.
	Context context.Context
	// Sandbox leaves out os, io, dofile, loadfile and loading modules from
	// files: only safe libraries and the glua modules.
	Sandbox bool
	// Stdout receives print output; nil means os.Stdout.
	Stdout io.Writer
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
	override := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	override(&c.Backend, o.Backend)
	override(&c.Pool.Strategy, o.MemoryPool)
	override(&c.Pool.SoftLimit, o.SoftLimit)
	override(&c.Pool.HardLimit, o.HardLimit)
	override(&c.CPU.Memory, o.CPUMemory)
	override(&c.Host.MemoryLimit, o.HostMemoryLimit)
	override(&c.Host.PinnedLimit, o.PinnedLimit)
	if o.CPUThreads != 0 {
		c.CPU.Threads = o.CPUThreads
	}
	if o.Device != 0 {
		c.CUDA.Device = o.Device
	}
	if o.Debug {
		c.Pool.Debug = true
	}
	if o.LuaCallDepth != 0 {
		c.Lua.CallDepth = o.LuaCallDepth
	}
	if o.LuaStackSlots != 0 {
		c.Lua.StackSlots = o.LuaStackSlots
	}
	// Flags and options are checked like the file, but are not "in" it.
	src := c.Source
	c.Source = ""
	err := c.Validate()
	c.Source = src
	return c, err
}
