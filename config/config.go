package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/gluaproject/glua/device"
)

// Config is the whole configuration. Field tags are the keys of config.toml.
type Config struct {
	// Backend is "auto" (the GPU when a CUDA device is present, else the
	// CPU), "cuda" or "cpu".
	Backend string     `toml:"backend"`
	Pool    PoolConfig `toml:"pool"`
	CPU     CPUConfig  `toml:"cpu"`
	CUDA    CUDAConfig `toml:"cuda"`
	Lua     LuaConfig  `toml:"lua"`
	Host    HostConfig `toml:"host"`

	// Source is the file the configuration was read from; "" means the
	// built-in defaults. Not a key.
	Source string `toml:"-"`
}

// PoolConfig is the [pool] table.
type PoolConfig struct {
	// Strategy is "caching", "cuda" (the driver's stream-ordered pool) or
	// "none" (every allocation straight from the device).
	Strategy string `toml:"strategy"`
	// SoftLimit and HardLimit are sizes ("512MiB", "1.5GiB", "1073741824")
	// or percentages of device memory ("80%"); "" means no limit. They are
	// strings in the file, even a plain number of bytes.
	SoftLimit string `toml:"soft_limit"`
	HardLimit string `toml:"hard_limit"`
	// Debug makes Runtime.Close report arrays still alive at the end.
	Debug bool `toml:"debug"`
	// GCPercent paces the search for dropped arrays: when the arrays
	// allocated since the last search pass this percentage of what live
	// arrays hold (and 16 MiB), the runtime walks the Lua state and frees
	// what the script cannot reach, and Go's collector looks for what Go
	// code dropped; a negative value leaves it all to Go's own pacing.
	GCPercent int `toml:"gc_percent"`
}

// CPUConfig is the [cpu] table.
type CPUConfig struct {
	// Memory is the CPU backend's device capacity, a size or a percentage
	// of the machine's memory (see CPUCapacity): allocations beyond it
	// fail as they would on a GPU of that size.
	Memory string `toml:"memory"`
	// Threads used by CPU kernels; 0 means all cores.
	Threads int `toml:"threads"`
}

// CUDAConfig is the [cuda] table.
type CUDAConfig struct {
	Device int `toml:"device"`
	// Library names tried in order with dlopen.
	LibCUDA   []string `toml:"libcuda"`
	LibNVRTC  []string `toml:"libnvrtc"`
	LibCUBLAS []string `toml:"libcublas"`
	// KernelCache is the directory of compiled kernels; "" means the user's
	// cache directory, "off" disables the cache.
	KernelCache string `toml:"kernel_cache"`
}

// HostConfig is the [host] table.
type HostConfig struct {
	// MemoryLimit caps the host memory a runtime's host arrays hold: a
	// size or a percentage of the machine's memory; "" means none (host
	// allocations are still refused when the machine cannot give them).
	MemoryLimit string `toml:"memory_limit"`
	// PinnedLimit caps the page-locked host memory a runtime holds, in
	// use and cached for reuse (staging buffers, pinned host arrays): a
	// size or a percentage of the machine's memory; "" means none.
	// Page-locked memory cannot be swapped out, so it has a cap of its
	// own.
	PinnedLimit string `toml:"pinned_limit"`
}

// LuaConfig is the [lua] table: how far a script's calls and values may
// grow before it stops with "stack overflow" (a catchable error, as in
// lua5.1), not a crash.
type LuaConfig struct {
	// CallDepth is how deeply calls may nest; Lua 5.1 allows 20,000 Lua
	// calls (LUAI_MAXCALLS).
	CallDepth int `toml:"call_depth"`
	// StackSlots is how many values the stack of all active calls may hold
	// (gopher-lua's registry); it starts small and grows as needed.
	StackSlots int `toml:"stack_slots"`
}

// Default is the built-in configuration, the same as the documented
// config.toml at the repository root.
func Default() Config {
	return Config{
		Backend: "auto",
		Pool:    PoolConfig{Strategy: "caching", GCPercent: 100},
		CPU:     CPUConfig{Memory: "50%"},
		Host:    HostConfig{PinnedLimit: "25%"},
		CUDA: CUDAConfig{
			LibCUDA:   device.DefaultLibCUDA(),
			LibNVRTC:  device.DefaultLibNVRTC(),
			LibCUBLAS: device.DefaultLibCUBLAS(),
		},
		Lua: LuaConfig{CallDepth: 20000, StackSlots: 1 << 22},
	}
}

// Env names the environment variables that override the file.
var Env = []string{"GLUA_CONFIG", "GLUA_BACKEND", "GLUA_MEMORY_POOL", "GLUA_SOFT_MEMORY_LIMIT", "GLUA_HARD_MEMORY_LIMIT", "GLUA_CPU_MEMORY", "GLUA_HOST_MEMORY_LIMIT", "GLUA_PINNED_LIMIT"}

// Lookup finds the configuration file: explicit (the --config flag) if
// given, then $GLUA_CONFIG, ./config.toml, ~/.config/glua/config.toml. It
// returns "" when there is none, which means the built-in defaults. An
// explicit file that does not exist is an error; the implicit candidates are
// simply skipped.
func Lookup(explicit string, getenv func(string) string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("config: %w", err)
		}
		return explicit, nil
	}
	if p := getenv("GLUA_CONFIG"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("config: GLUA_CONFIG: %w", err)
		}
		return p, nil
	}
	candidates := []string{"config.toml"}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".config", "glua", "config.toml"))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("config: %w", err)
		}
	}
	return "", nil
}

// Load looks the file up (see Lookup), reads it over the defaults, applies
// the environment and validates the result.
func Load(explicit string, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	path, err := Lookup(explicit, getenv)
	if err != nil {
		return Config{}, err
	}
	c := Default()
	if path != "" {
		if c, err = LoadFile(path); err != nil {
			return Config{}, err
		}
	}
	if err := c.ApplyEnv(getenv); err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// LoadFile reads one file over the defaults. Unknown keys and values of the
// wrong type or form are errors naming the key and the file.
func LoadFile(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(string(data), path)
	if err != nil {
		return Config{}, err
	}
	return c, nil
}

// Parse reads TOML text over the defaults; name is used in errors.
func Parse(text, name string) (Config, error) {
	c := Default()
	md, err := toml.Decode(text, &c)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return Config{}, fmt.Errorf("config %s: line %d: %s", name, perr.Position.Line, perr.Message)
		}
		return Config{}, fmt.Errorf("config %s: %w", name, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		keys := make([]string, len(undecoded))
		for i, k := range undecoded {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		return Config{}, fmt.Errorf("config %s: unknown key %s", name, strings.Join(keys, ", "))
	}
	c.Source = name
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// ApplyEnv overrides settings from GLUA_BACKEND, GLUA_MEMORY_POOL,
// GLUA_SOFT_MEMORY_LIMIT, GLUA_HARD_MEMORY_LIMIT, GLUA_CPU_MEMORY,
// GLUA_HOST_MEMORY_LIMIT and GLUA_PINNED_LIMIT. A bad value is an error
// naming the variable, not the file: the file is not where it is wrong.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	vars := []struct {
		name, key string
		dst       *string
	}{
		{"GLUA_BACKEND", "backend", &c.Backend},
		{"GLUA_MEMORY_POOL", "pool.strategy", &c.Pool.Strategy},
		{"GLUA_SOFT_MEMORY_LIMIT", "pool.soft_limit", &c.Pool.SoftLimit},
		{"GLUA_HARD_MEMORY_LIMIT", "pool.hard_limit", &c.Pool.HardLimit},
		{"GLUA_CPU_MEMORY", "cpu.memory", &c.CPU.Memory},
		{"GLUA_HOST_MEMORY_LIMIT", "host.memory_limit", &c.Host.MemoryLimit},
		{"GLUA_PINNED_LIMIT", "host.pinned_limit", &c.Host.PinnedLimit},
	}
	for _, v := range vars {
		val, ok := lookupEnv(getenv, v.name)
		if !ok {
			continue
		}
		if err := checkKey(v.key, val); err != nil {
			return fmt.Errorf("config: $%s: %w", v.name, err)
		}
		*v.dst = val
	}
	return c.Validate()
}

func lookupEnv(getenv func(string) string, name string) (string, bool) {
	v := strings.TrimSpace(getenv(name))
	return v, v != ""
}

// Validate checks every value's form. It names the key and, when the
// configuration came from a file, the file.
func (c Config) Validate() error {
	where := "config"
	if c.Source != "" {
		where = "config " + c.Source
	}
	bad := func(key string, err error) error { return fmt.Errorf("%s: %s: %w", where, key, err) }
	for _, kv := range [][2]string{
		{"backend", c.Backend},
		{"pool.strategy", c.Pool.Strategy},
		{"pool.soft_limit", c.Pool.SoftLimit},
		{"pool.hard_limit", c.Pool.HardLimit},
		{"host.memory_limit", c.Host.MemoryLimit},
		{"host.pinned_limit", c.Host.PinnedLimit},
	} {
		if err := checkKey(kv[0], kv[1]); err != nil {
			return bad(kv[0], err)
		}
	}
	if err := checkKey("cpu.memory", c.CPU.Memory); err != nil {
		return bad("cpu.memory", err)
	}
	if c.CPU.Threads < 0 {
		return bad("cpu.threads", fmt.Errorf("%d is negative", c.CPU.Threads))
	}
	if c.CUDA.Device < 0 {
		return bad("cuda.device", fmt.Errorf("%d is negative", c.CUDA.Device))
	}
	// Below these gopher-lua cannot start a script at all.
	if c.Lua.CallDepth < MinCallDepth {
		return bad("lua.call_depth", fmt.Errorf("%d is less than %d", c.Lua.CallDepth, MinCallDepth))
	}
	if c.Lua.StackSlots < MinStackSlots {
		return bad("lua.stack_slots", fmt.Errorf("%d is less than %d", c.Lua.StackSlots, MinStackSlots))
	}
	for key, names := range map[string][]string{"cuda.libcuda": c.CUDA.LibCUDA, "cuda.libnvrtc": c.CUDA.LibNVRTC, "cuda.libcublas": c.CUDA.LibCUBLAS} {
		if len(names) == 0 {
			return bad(key, errors.New("needs at least one library name"))
		}
	}
	return nil
}

// The smallest [lua] bounds accepted: room for glua's own calls around a
// script and for a Lua function's 256 registers.
const (
	MinCallDepth  = 64
	MinStackSlots = 1024
)

// checkKey checks the form of one string setting that the environment can
// also set, so that the file and the environment are checked alike.
func checkKey(key, v string) error {
	oneOf := func(choices ...string) error {
		for _, c := range choices {
			if v == c {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(choices, ", "))
	}
	switch key {
	case "backend":
		return oneOf("auto", "cuda", "cpu")
	case "pool.strategy":
		return oneOf("caching", "cuda", "none")
	case "pool.soft_limit", "pool.hard_limit", "host.memory_limit", "host.pinned_limit":
		return CheckLimit(v)
	case "cpu.memory":
		if n, err := parseShare(strings.TrimSpace(v), 1<<40); err != nil {
			return err
		} else if n == 0 {
			return errors.New("must be more than 0")
		}
		return nil
	}
	return fmt.Errorf("no check for key %s", key)
}

// Encode writes the configuration as TOML, for `glua --info`.
func (c Config) Encode(w io.Writer) error {
	return toml.NewEncoder(w).Encode(c)
}
