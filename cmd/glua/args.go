package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gluaproject/glua/config"
)

// usageLine begins the usage, as lua.c's does.
const usageLine = "usage: glua [options] [script [args]]"

// luaOptions are lua5.1's options, as --help lists them.
var luaOptions = [][2]string{
	{"-e stat", "execute string 'stat'"},
	{"-i", "enter interactive mode after executing 'script'"},
	{"-l mod", "require library 'mod' into global 'mod'"},
	{"-v", "show version information"},
	{"-E", "ignore environment variables (GLUA_*, LUA_PATH)"},
	{"--", "stop handling options"},
	{"-", "stop handling options and execute stdin"},
}

// A longOption is one of glua's own options: --name, or --name VALUE
// (also --name=VALUE) when it has an arg.
type longOption struct {
	name string // without the dashes
	arg  string // what the value is, for --help; "" for a switch
	help string
	key  string // the config key the value sets; "" for none
}

// longOptions are glua's options, in the order --help lists them. A value
// that sets a config key is checked as the file's would be (configure);
// any other is read from options.settings by name. One more option with
// a value is one more line here.
var longOptions = []longOption{
	{"help", "", "show this help and exit (also -h)", ""},
	{"info", "", "show devices, libraries and the configuration in effect", ""},
	{"config", "FILE", "read the configuration from FILE", ""},
	{"backend", "NAME", "auto, cuda or cpu", "backend"},
	{"device", "N", "use device N, 0 the first (the CPU backend has only 0)", "cuda.device"},
	{"pool", "NAME", "memory pool: caching, cuda or none", "pool.strategy"},
	{"soft-limit", "SIZE", "release cached memory above SIZE (e.g. 2GiB, 80%)", "pool.soft_limit"},
	{"hard-limit", "SIZE", "never reserve more device memory than SIZE", "pool.hard_limit"},
	{"cpu-memory", "SIZE", "the CPU backend's capacity (e.g. 8GiB, 50% of RAM)", "cpu.memory"},
	{"host-memory-limit", "SIZE", "cap the host memory that host arrays hold together", "host.memory_limit"},
	{"pinned-limit", "SIZE", "cap the pinned host memory held, in use and cached", "host.pinned_limit"},
	{"lua-memory-limit", "SIZE", "cap the memory the script's Lua values take (--sandbox: 1GiB)", "lua.memory_limit"},
	{"sandbox", "", "leave out os, io, debug, dofile, loadfile and file modules", ""},
	{"timeout", "DURATION", "stop the script after DURATION (e.g. 30s, 1m30s; 0: never)", ""},
	{"memory-profile", "FILE", "record memory events; write them to FILE (HTML) at exit", ""},
	{"nproc", "N", "run N ranks of the script on this host, rank r on device r", ""},
	{"allow-oversubscribe", "", "let --nproc run more ranks than devices (the CPU backend's one)", ""},
	{"nnodes", "N", "the job's number of nodes, each with a launcher of its own (torchrun's name)", ""},
	{"node-rank", "R", "this node's place among them, 0 to N-1; ranks are numbered node by node", ""},
	{"master-addr", "HOST", "node 0's address, where the launchers meet", ""},
	{"master-port", "PORT", "the port where the launchers meet; the ranks meet on the next one", ""},
	{"nproc-per-node", "N", "ranks on this node, as --nproc", ""},
}

// launcherOptions are the options a launcher keeps to itself: each rank
// runs the command line without them, so that it does not launch again.
var launcherOptions = []string{"nproc", "allow-oversubscribe", "nnodes", "node-rank", "master-addr", "master-port", "nproc-per-node"}

func findOption(name string) (longOption, bool) {
	for _, opt := range longOptions {
		if opt.name == name {
			return opt, true
		}
	}
	return longOption{}, false
}

// step is one -e or -l, run in command-line order before the script.
type step struct {
	option byte // 'e' or 'l'
	value  string
}

// options is the command line as lua.c's collectargs reads it, plus glua's
// long options.
type options struct {
	steps []step
	// script is the index in argv of the script name, 0 when there is none
	// (lua.c's convention: argv[0] is the interpreter).
	script      int
	interactive bool // -i
	version     bool // -v, and -i, which prints the banner too
	ignoreEnv   bool // -E
	help        bool // -h, --help
	info        bool // --info
	sandbox     bool // --sandbox
	// oversubscribe lets --nproc start more ranks than devices.
	oversubscribe bool // --allow-oversubscribe

	// launcherArgs are the indices in argv of the launcherOptions and
	// their values: the launcher starts each rank with the command line
	// less these.
	launcherArgs []int

	// settings are the long options given, by name without the dashes.
	// Present with "" means given empty: `--hard-limit ""` clears a limit
	// set in the file.
	settings map[string]string
}

// usageError is a command line glua cannot read: reported with the usage.
type usageError string

func (e usageError) Error() string { return string(e) }

func unrecognized(option string) usageError {
	return usageError(fmt.Sprintf("unrecognized option '%s'", option))
}

// parseArgs reads options up to the script name, which ends them, as lua.c
// does: `-` is the script "stdin", `--` makes the next argument the script
// whatever it looks like, and an option written with extra characters
// (`-vx`) is unrecognized.
func parseArgs(argv []string) (options, error) {
	var o options
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if len(a) == 0 || a[0] != '-' || a == "-" {
			o.script = i
			break
		}
		if a == "--" {
			if i+1 < len(argv) {
				o.script = i + 1
			}
			break
		}
		if strings.HasPrefix(a, "--") {
			name, value, hasValue := strings.Cut(a[2:], "=")
			opt, ok := findOption(name)
			if !ok || (opt.arg == "" && hasValue) {
				return o, unrecognized(a)
			}
			launcher := slices.Contains(launcherOptions, name)
			if launcher {
				o.launcherArgs = append(o.launcherArgs, i)
			}
			if opt.arg == "" {
				o.setSwitch(name)
				continue
			}
			if !hasValue {
				if i+1 == len(argv) {
					return o, usageError(fmt.Sprintf("'%s' needs argument", a))
				}
				i++
				value = argv[i]
				if launcher {
					o.launcherArgs = append(o.launcherArgs, i)
				}
			}
			if o.settings == nil {
				o.settings = map[string]string{}
			}
			o.settings[name] = value
			continue
		}
		// Only -e and -l take their value in the same argument (-eSTAT).
		if a[1] != 'e' && a[1] != 'l' && len(a) > 2 {
			return o, unrecognized(a)
		}
		switch a[1] {
		case 'i':
			o.interactive, o.version = true, true
		case 'v':
			o.version = true
		case 'E':
			o.ignoreEnv = true
		case 'h':
			o.help = true
		case 'e', 'l':
			value := a[2:]
			if value == "" {
				if i+1 == len(argv) {
					return o, usageError(fmt.Sprintf("'%s' needs argument", a))
				}
				i++
				value = argv[i]
			}
			o.steps = append(o.steps, step{option: a[1], value: value})
		default:
			return o, unrecognized(a)
		}
	}
	return o, nil
}

// setSwitch records a long option without a value.
func (o *options) setSwitch(name string) {
	switch name {
	case "help":
		o.help = true
	case "info":
		o.info = true
	case "sandbox":
		o.sandbox = true
	case "allow-oversubscribe":
		o.oversubscribe = true
	}
}

// runsNothing says the command line asks only for the version, so that
// `glua -v` needs neither a configuration nor a device.
func (o options) runsNothing() bool {
	return o.version && !o.info && !o.interactive && o.script == 0 && len(o.steps) == 0
}

// runsStdin says stdin is the script when it is not a terminal, as for lua
// with no script, no -e and no -v.
func (o options) runsStdin() bool {
	return o.script == 0 && !o.interactive && !o.version && !o.info && !hasStep(o.steps, 'e')
}

func hasStep(steps []step, option byte) bool {
	for _, s := range steps {
		if s.option == option {
			return true
		}
	}
	return false
}

// configure loads the configuration as the command line asks: the file
// from --config or the usual lookup, the GLUA_* environment unless -E, and
// the long options over both. A bad option value is reported under the
// option's name, not as a fault of the file.
func (o options) configure(getenv func(string) string) (config.Config, error) {
	if o.ignoreEnv {
		getenv = func(string) string { return "" }
	}
	c, err := config.Load(o.settings["config"], getenv)
	if err != nil {
		return c, err
	}
	// In the table's order, so that of two bad values the same one is
	// named.
	for _, opt := range longOptions {
		v, ok := o.settings[opt.name]
		if !ok || opt.key == "" {
			continue
		}
		if err := c.Set(opt.key, v, "--"+opt.name); err != nil {
			return c, fmt.Errorf("--%s: %w", opt.name, err)
		}
	}
	return c, nil
}

// nproc is --nproc's number of ranks, and whether it was given; 1 when it
// was not.
func (o options) nproc() (int, bool, error) {
	v, ok := o.settings["nproc"]
	if !ok {
		return 1, false, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	switch {
	case err != nil:
		return 0, true, fmt.Errorf("--nproc: %q is not a whole number of processes", v)
	case n < 1:
		return 0, true, fmt.Errorf("--nproc: %d: there must be at least one process", n)
	}
	return n, true, nil
}

// timeout is --timeout's duration; 0 when there is none.
func (o options) timeout() (time.Duration, error) {
	v, ok := o.settings["timeout"]
	if !ok {
		return 0, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	switch {
	case err != nil:
		return 0, fmt.Errorf("--timeout: %q is not a duration (try 30s, 1m30s or 2h)", v)
	case d < 0:
		return 0, fmt.Errorf("--timeout: %q is negative", v)
	}
	return d, nil
}
