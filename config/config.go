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
	"time"

	"github.com/BurntSushi/toml"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/regularfile"
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
	REPL    REPLConfig `toml:"repl"`
	Dist    DistConfig `toml:"dist"`

	// Source is the file the configuration was read from; "" means the
	// built-in defaults. Not a key.
	Source string `toml:"-"`
	// origins maps the keys not at their default to where their value
	// came from (Origin); nil when none is. Set copies it before writing,
	// since copies of a Config share it.
	origins map[string]string
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
	// LibNCCL is loaded only when a group of several processes opens.
	LibNCCL []string `toml:"libnccl"`
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

// REPLConfig is the [repl] table: glua's interactive mode.
type REPLConfig struct {
	// History is the file that keeps the lines typed at the prompt from
	// one session to the next; a leading "~/" is the home directory, and
	// "" or "off" keeps no history (HistoryFile).
	History string `toml:"history"`
}

// DistConfig is the [dist] table: several processes working together.
type DistConfig struct {
	// Timeout bounds how long a rank waits for the others, at the
	// rendezvous and in every collective, before it fails naming the rank
	// it waited for: a Go duration ("5m", "90s"). A rank that died must
	// end the others, not leave them waiting for ever.
	Timeout string `toml:"timeout"`
}

// DistTimeout is [dist] timeout as a duration.
func (c Config) DistTimeout() (time.Duration, error) {
	return parseTimeout(c.Dist.Timeout)
}

func parseTimeout(text string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(text))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 5m, 90s)", text)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", text)
	}
	return d, nil
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
	// MemoryLimit caps the memory a script's Lua values (strings, tables,
	// functions, coroutines) take: a size or a percentage of the
	// machine's memory; "" means the host's limit (LuaMemoryLimit), "none"
	// no limit of glua's own. Past it the script stops with "not enough
	// memory", an error pcall can catch, as in lua5.1.
	MemoryLimit string `toml:"memory_limit"`
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
			LibNCCL:   device.DefaultLibNCCL(),
		},
		Lua:  LuaConfig{CallDepth: 20000, StackSlots: 1 << 22},
		REPL: REPLConfig{History: "~/.glua_history"},
		Dist: DistConfig{Timeout: "1m"},
	}
}

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
	data, err := regularfile.ReadFile(path)
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
	for _, k := range Keys {
		if md.IsDefined(strings.Split(k.Name, ".")...) {
			c.origins = withOrigin(c.origins, k.Name, "file")
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// ApplyEnv overrides the file with the environment: each key's variable
// (Keys), where it is set and not blank. A bad value is an error naming
// the variable, not the file: the file is not where it is wrong.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	for _, k := range Keys {
		val := strings.TrimSpace(getenv(k.Env))
		if val == "" {
			continue
		}
		if err := c.Set(k.Name, val, "$"+k.Env); err != nil {
			return fmt.Errorf("config: $%s: %w", k.Env, err)
		}
	}
	return c.Validate()
}

// Validate checks every value's form. It names the key and, when the
// configuration came from a file, the file.
func (c Config) Validate() error {
	where := "config"
	if c.Source != "" {
		where = "config " + c.Source
	}
	for _, k := range Keys {
		if err := c.check(k.Name); err != nil {
			return fmt.Errorf("%s: %s: %w", where, k.Name, err)
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

// check checks the form of one key's value, so that the file, the
// environment and flags are checked alike. Keys that any value suits
// have no case.
func (c Config) check(key string) error {
	switch key {
	case "backend":
		return oneOf(c.Backend, "auto", "cuda", "cpu")
	case "pool.strategy":
		return oneOf(c.Pool.Strategy, "caching", "cuda", "none")
	case "pool.soft_limit":
		return CheckLimit(c.Pool.SoftLimit)
	case "pool.hard_limit":
		return CheckLimit(c.Pool.HardLimit)
	case "host.memory_limit":
		return CheckLimit(c.Host.MemoryLimit)
	case "host.pinned_limit":
		return CheckLimit(c.Host.PinnedLimit)
	case "lua.memory_limit":
		return CheckLimit(c.Lua.MemoryLimit)
	case "cpu.memory":
		if n, err := parseShare(strings.TrimSpace(c.CPU.Memory), 1<<40); err != nil {
			return err
		} else if n == 0 {
			return errors.New("must be more than 0")
		}
	case "cpu.threads":
		return notNegative(c.CPU.Threads)
	case "dist.timeout":
		_, err := parseTimeout(c.Dist.Timeout)
		return err
	case "cuda.device":
		return notNegative(c.CUDA.Device)
	case "cuda.libcuda":
		return someLibrary(c.CUDA.LibCUDA)
	case "cuda.libnvrtc":
		return someLibrary(c.CUDA.LibNVRTC)
	case "cuda.libcublas":
		return someLibrary(c.CUDA.LibCUBLAS)
	case "cuda.libnccl":
		return someLibrary(c.CUDA.LibNCCL)
	// Below these gopher-lua cannot start a script at all.
	case "lua.call_depth":
		return atLeast(c.Lua.CallDepth, MinCallDepth)
	case "lua.stack_slots":
		return atLeast(c.Lua.StackSlots, MinStackSlots)
	}
	return nil
}

func oneOf(v string, choices ...string) error {
	for _, c := range choices {
		if v == c {
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", v, strings.Join(choices, ", "))
}

func notNegative(n int) error {
	if n < 0 {
		return fmt.Errorf("%d is negative", n)
	}
	return nil
}

func atLeast(n, least int) error {
	if n < least {
		return fmt.Errorf("%d is less than %d", n, least)
	}
	return nil
}

func someLibrary(names []string) error {
	if len(names) == 0 {
		return errors.New("needs at least one library name")
	}
	return nil
}

// HistoryFile is the REPL's history file ([repl] history) with a leading
// "~/" made the home directory; "" when no history is to be kept.
func (c Config) HistoryFile() (string, error) {
	h := c.REPL.History
	if h == "" || h == "off" {
		return "", nil
	}
	if rest, ok := strings.CutPrefix(h, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("repl.history %q: %w", h, err)
		}
		return filepath.Join(home, rest), nil
	}
	return h, nil
}

// Encode writes the configuration as TOML, for `glua --info`.
func (c Config) Encode(w io.Writer) error {
	return toml.NewEncoder(w).Encode(c)
}
