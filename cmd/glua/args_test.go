package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestOptionsAreReadInLuaOrder(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		want options
	}{
		{"nothing", []string{"glua"}, options{}},
		{"script ends the options", []string{"glua", "s.lua", "-v", "-e", "x"}, options{script: 1}},
		{"-e and -l keep their order", []string{"glua", "-l", "a", "-e", "x=1", "-lb", "-ey=2"},
			options{steps: []step{{'l', "a"}, {'e', "x=1"}, {'l', "b"}, {'e', "y=2"}}}},
		{"-e takes the next argument whatever it is", []string{"glua", "-e", "-v"}, options{steps: []step{{'e', "-v"}}}},
		{"-- makes the next argument the script", []string{"glua", "--", "-v", "a"}, options{script: 2}},
		{"-- at the end means no script", []string{"glua", "-v", "--"}, options{version: true}},
		{"- is the script stdin", []string{"glua", "-", "a"}, options{script: 1}},
		{"an empty argument is a script name", []string{"glua", "", "a"}, options{script: 1}},
		{"-i implies the banner", []string{"glua", "-i"}, options{interactive: true, version: true}},
		{"-E", []string{"glua", "-E", "x.lua"}, options{ignoreEnv: true, script: 2}},
		{"long options with a space or =", []string{"glua", "--backend", "cpu", "--pool=none", "--soft-limit", "1GiB", "--hard-limit=", "--config", "c.toml", "s.lua"},
			options{script: 9, settings: map[string]string{"backend": "cpu", "pool": "none", "soft-limit": "1GiB", "hard-limit": "", "config": "c.toml"}}},
		{"--info", []string{"glua", "--info"}, options{info: true}},
		{"-h and --help", []string{"glua", "-h", "--help"}, options{help: true}},
		{"--sandbox, --timeout and --device", []string{"glua", "--sandbox", "--timeout", "2s", "--device=1", "s.lua"},
			options{sandbox: true, script: 5, settings: map[string]string{"timeout": "2s", "device": "1"}}},
		{"long options after the script belong to it", []string{"glua", "s.lua", "--backend", "cuda"}, options{script: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(tc.argv)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseArgs(%q) =\n%+v\nwant\n%+v", tc.argv, got, tc.want)
			}
		})
	}
}

func TestBadOptionsAreUsageErrors(t *testing.T) {
	cases := []struct {
		argv []string
		want string
	}{
		{[]string{"glua", "-x"}, "unrecognized option '-x'"},
		{[]string{"glua", "-vx"}, "unrecognized option '-vx'"},
		{[]string{"glua", "-Ex"}, "unrecognized option '-Ex'"},
		{[]string{"glua", "--verbose"}, "unrecognized option '--verbose'"},
		{[]string{"glua", "--info=yes"}, "unrecognized option '--info=yes'"},
		{[]string{"glua", "---"}, "unrecognized option '---'"},
		{[]string{"glua", "-e"}, "'-e' needs argument"},
		{[]string{"glua", "-v", "-l"}, "'-l' needs argument"},
		{[]string{"glua", "--backend"}, "'--backend' needs argument"},
		{[]string{"glua", "--timeout"}, "'--timeout' needs argument"},
		{[]string{"glua", "--sandbox=yes"}, "unrecognized option '--sandbox=yes'"},
		{[]string{"glua", "-hv"}, "unrecognized option '-hv'"},
		{[]string{"glua", "--memory"}, "unrecognized option '--memory'"},
	}
	for _, tc := range cases {
		_, err := parseArgs(tc.argv)
		if _, ok := err.(usageError); !ok || err.Error() != tc.want {
			t.Errorf("parseArgs(%q) error = %#v, want usage error %q", tc.argv, err, tc.want)
		}
	}
}

func TestWhatRunsWhenNoScriptIsGiven(t *testing.T) {
	cases := []struct {
		argv                 []string
		runsNothing, runsStd bool
	}{
		{[]string{"glua"}, false, true},
		{[]string{"glua", "-v"}, true, false},
		{[]string{"glua", "--info"}, false, false},
		{[]string{"glua", "-e", "x=1"}, false, false},
		{[]string{"glua", "-l", "m"}, false, true},
		{[]string{"glua", "-v", "-e", "x=1"}, false, false},
		{[]string{"glua", "-i"}, false, false},
		{[]string{"glua", "-"}, false, false},
		{[]string{"glua", "--"}, false, true},
	}
	for _, tc := range cases {
		o, err := parseArgs(tc.argv)
		if err != nil {
			t.Fatal(err)
		}
		if o.runsNothing() != tc.runsNothing || o.runsStdin() != tc.runsStd {
			t.Errorf("%q: runsNothing %v, runsStdin %v; want %v, %v", tc.argv, o.runsNothing(), o.runsStdin(), tc.runsNothing, tc.runsStd)
		}
	}
}

func TestTimeoutIsAGoDuration(t *testing.T) {
	cases := []struct {
		value string
		want  time.Duration
		err   string
	}{
		{"30s", 30 * time.Second, ""},
		{"1m30s", 90 * time.Second, ""},
		{"0", 0, ""},
		{"soon", 0, `--timeout: "soon" is not a duration (try 30s, 1m30s or 2h)`},
		{"30", 0, `--timeout: "30" is not a duration (try 30s, 1m30s or 2h)`},
		{"-1s", 0, `--timeout: "-1s" is negative`},
	}
	for _, tc := range cases {
		o, err := parseArgs([]string{"glua", "--timeout", tc.value})
		if err != nil {
			t.Fatal(err)
		}
		got, err := o.timeout()
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("--timeout %s: %v, %v; want %v, %q", tc.value, got, err, tc.want, tc.err)
		}
	}
}

func TestFlagsOverrideEnvironmentOverridesFile(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	file := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(file, []byte("backend = \"cuda\"\n[pool]\nstrategy = \"none\"\nhard_limit = \"1GiB\"\nsoft_limit = \"10%\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(name string) string {
		return map[string]string{"GLUA_CONFIG": file, "GLUA_BACKEND": "cpu", "GLUA_MEMORY_POOL": "cuda"}[name]
	}
	cases := []struct {
		name string
		argv []string
		want [4]string // backend, strategy, soft, hard
	}{
		{"environment over file", []string{"glua"}, [4]string{"cpu", "cuda", "10%", "1GiB"}},
		{"flags over environment", []string{"glua", "--backend", "auto", "--pool", "caching", "--soft-limit", "20%"}, [4]string{"auto", "caching", "20%", "1GiB"}},
		{"an empty flag clears the file's limit", []string{"glua", "--hard-limit="}, [4]string{"cpu", "cuda", "10%", ""}},
		{"-E ignores the environment, GLUA_CONFIG too", []string{"glua", "-E"}, [4]string{"auto", "caching", "", ""}},
		{"-E keeps --config", []string{"glua", "-E", "--config", file}, [4]string{"cuda", "none", "10%", "1GiB"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseArgs(tc.argv)
			if err != nil {
				t.Fatal(err)
			}
			c, err := o.configure(getenv)
			if err != nil {
				t.Fatal(err)
			}
			if got := [4]string{c.Backend, c.Pool.Strategy, c.Pool.SoftLimit, c.Pool.HardLimit}; got != tc.want {
				t.Errorf("configuration %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBadFlagValueNamesTheFlag(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	noEnv := func(string) string { return "" }
	cases := []struct {
		argv []string
		want string
	}{
		{[]string{"glua", "--hard-limit", "lots"}, `--hard-limit: "lots" is not a size`},
		{[]string{"glua", "--soft-limit=200%"}, `--soft-limit: "200%": a percentage must be more than 0 and at most 100`},
		{[]string{"glua", "--backend", "gpu"}, `--backend: "gpu" is not one of auto, cuda, cpu`},
		{[]string{"glua", "--backend="}, `--backend: "" is not one of auto, cuda, cpu`},
		{[]string{"glua", "--pool", "arena"}, `--pool: "arena" is not one of caching, cuda, none`},
		{[]string{"glua", "--pinned-limit", "lots"}, `--pinned-limit: "lots" is not a size`},
		{[]string{"glua", "--device", "first"}, `--device: "first" is not a whole number`},
		{[]string{"glua", "--device=-1"}, `--device: -1 is negative`},
	}
	for _, tc := range cases {
		o, err := parseArgs(tc.argv)
		if err != nil {
			t.Fatal(err)
		}
		_, err = o.configure(noEnv)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to start with %q", tc.argv, err, tc.want)
		}
	}
}
