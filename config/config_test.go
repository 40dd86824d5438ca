package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// env returns a getenv reading only the given variables, so that a test
// does not depend on the environment it runs in.
func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRepositoryConfigTomlIsTheDefault(t *testing.T) {
	c, err := LoadFile(filepath.Join("..", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	c.Source, c.origins = "", nil
	if want := Default(); !reflect.DeepEqual(c, want) {
		t.Errorf("config.toml parses to\n%+v\nbut config.Default() is\n%+v", c, want)
	}
}

func TestRepositoryConfigTomlCommentsEveryKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// A key is commented when the lines above it, skipping the keys of its
	// own group, end in a comment.
	isKey := func(line string) bool { return strings.Contains(line, " = ") && !strings.HasPrefix(line, "#") }
	lines := strings.Split(string(data), "\n")
	keys := 0
	for i, line := range lines {
		if !isKey(line) {
			continue
		}
		keys++
		j := i - 1
		for j >= 0 && isKey(lines[j]) {
			j--
		}
		if j < 0 || !strings.HasPrefix(lines[j], "#") {
			t.Errorf("config.toml line %d %q has no comment above it", i+1, line)
		}
	}
	if want := countKeys(reflect.TypeOf(Config{})); keys != want {
		t.Errorf("config.toml has %d keys, config.Config has %d", keys, want)
	}
}

// countKeys counts the TOML keys of a struct type, tables included only
// through their own keys.
func countKeys(t reflect.Type) int {
	n := 0
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Tag.Get("toml") == "-" || !f.IsExported():
		case f.Type.Kind() == reflect.Struct:
			n += countKeys(f.Type)
		default:
			n++
		}
	}
	return n
}

// TestLookupOrder checks each candidate in turn, removing the winner of
// the previous row: explicit, $GLUA_CONFIG, ./config.toml, the home file.
func TestLookupOrder(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(work)
	explicit := writeFile(t, filepath.Join(t.TempDir(), "explicit.toml"), "")
	fromEnv := writeFile(t, filepath.Join(t.TempDir(), "env.toml"), "")
	homeFile := filepath.Join(home, ".config", "glua", "config.toml")

	cases := []struct {
		name     string
		explicit string
		env      string
		cwdFile  bool
		homeFile bool
		want     string
	}{
		{"explicit wins over everything", explicit, fromEnv, true, true, explicit},
		{"GLUA_CONFIG wins over the files", "", fromEnv, true, true, fromEnv},
		{"./config.toml wins over the home file", "", "", true, true, "config.toml"},
		{"the home file", "", "", false, true, homeFile},
		{"no file means defaults", "", "", false, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove("config.toml")
			os.Remove(homeFile)
			if tc.cwdFile {
				writeFile(t, "config.toml", "")
			}
			if tc.homeFile {
				writeFile(t, homeFile, "")
			}
			got, err := Lookup(tc.explicit, env(map[string]string{"GLUA_CONFIG": tc.env}))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Lookup = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMissingNamedConfigIsAnError(t *testing.T) {
	t.Chdir(t.TempDir())
	missing := filepath.Join(t.TempDir(), "nope.toml")
	cases := []struct {
		name     string
		explicit string
		vars     map[string]string
		want     []string
	}{
		{"--config", missing, nil, []string{"nope.toml"}},
		{"GLUA_CONFIG", "", map[string]string{"GLUA_CONFIG": missing}, []string{"GLUA_CONFIG", "nope.toml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.explicit, env(tc.vars))
			if err == nil {
				t.Fatal("Load succeeded with a missing file")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadWithoutAnyFileGivesDefaults(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Chdir(t.TempDir())
	c, err := Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := Default(); !reflect.DeepEqual(c, want) {
		t.Errorf("Load = %+v, want the defaults %+v", c, want)
	}
}

func TestKeysLeftOutKeepTheirDefaults(t *testing.T) {
	path := filepath.Join("testdata", "cpu_small.toml")
	c, err := Load(path, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Source = path
	want.Backend = "cpu"
	want.Pool.HardLimit = "256MiB"
	want.CPU.Memory = "1GiB"
	// A list in the file replaces the default list; it does not add to it.
	want.CUDA.LibCUBLAS = []string{"/opt/cuda/lib64/libcublas.so.12"}
	want.origins = map[string]string{"backend": "file", "pool.hard_limit": "file", "cpu.memory": "file", "cuda.libcublas": "file"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Load(%s) =\n%+v\nwant\n%+v", path, c, want)
	}
}

func TestUnknownKeyErrorNamesKeyAndFile(t *testing.T) {
	path := filepath.Join("testdata", "unknown_key.toml")
	_, err := Load(path, env(nil))
	if err == nil {
		t.Fatal("Load accepted an unknown key")
	}
	for _, w := range []string{path, "pool.hardlimit", "unknown key"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestBadValueErrorNamesKeyFileAndValue(t *testing.T) {
	path := filepath.Join("testdata", "hard_limit_lots.toml")
	_, err := Load(path, env(nil))
	want := `config ` + path + `: pool.hard_limit: "lots" is not a size`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Load(%s) error = %v, want it to start with %q", path, err, want)
	}
}

func TestBadValuesAreRejected(t *testing.T) {
	cases := []struct {
		text string
		want string // the key and what is wrong
	}{
		{"[pool]\nhard_limit = \"lots\"", `pool.hard_limit: "lots" is not a size`},
		{"[pool]\nsoft_limit = \"150%\"", `pool.soft_limit: "150%": a percentage must be more than 0 and at most 100`},
		{"[pool]\nsoft_limit = \"0%\"", `pool.soft_limit: "0%": a percentage must be more than 0`},
		{"[pool]\nhard_limit = \"-1GiB\"", `pool.hard_limit: "-1GiB": a size cannot be negative`},
		{"[pool]\nstrategy = \"arena\"", `pool.strategy: "arena" is not one of caching, cuda, none`},
		{"backend = \"gpu\"", `backend: "gpu" is not one of auto, cuda, cpu`},
		{"backend = \"\"", `backend: "" is not one of auto, cuda, cpu`},
		{"[cpu]\nthreads = -1", "cpu.threads: -1 is negative"},
		{"[cpu]\nmemory = \"0\"", "cpu.memory: must be more than 0"},
		{"[cpu]\nmemory = \"150%\"", "cpu.memory: \"150%\": a percentage must be more than 0 and at most 100"},
		{"[cpu]\nmemory = \"\"", "cpu.memory: must be more than 0"},
		{"[cuda]\ndevice = -2", "cuda.device: -2 is negative"},
		{"[cuda]\nlibnvrtc = []", "cuda.libnvrtc: needs at least one library name"},
		{"[lua]\ncall_depth = 10", "lua.call_depth: 10 is less than 64"},
		{"[lua]\nstack_slots = 0", "lua.stack_slots: 0 is less than 1024"},
		{"[lua]\nstack = 5", "unknown key lua.stack"},
		{"[cpu]\nthreads = \"4\"", `cpu.threads`},
		{"[pool]\nhard_limit = 1073741824", `pool.hard_limit`},
		{"backend = ", "line 1"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			_, err := Parse(tc.text, "bad.toml")
			if err == nil {
				t.Fatalf("Parse(%q) accepted it", tc.text)
			}
			if !strings.HasPrefix(err.Error(), "config bad.toml: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) error = %q, want \"config bad.toml: ...%s...\"", tc.text, err, tc.want)
			}
		})
	}
}

func TestEnvironmentOverridesTheFile(t *testing.T) {
	path := filepath.Join("testdata", "cpu_small.toml")
	c, err := Load(path, env(map[string]string{
		"GLUA_BACKEND":           "auto",
		"GLUA_MEMORY_POOL":       "none",
		"GLUA_SOFT_MEMORY_LIMIT": " 40% ",
		"GLUA_HARD_MEMORY_LIMIT": "1.5GiB",
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := [4]string{c.Backend, c.Pool.Strategy, c.Pool.SoftLimit, c.Pool.HardLimit}
	if want := [4]string{"auto", "none", "40%", "1.5GiB"}; got != want {
		t.Errorf("after the environment: %q, want %q", got, want)
	}
	if c.CPU.Memory != "1GiB" || c.Source != path {
		t.Errorf("the environment changed what it does not name: %+v", c)
	}
}

func TestEmptyEnvironmentVariableIsIgnored(t *testing.T) {
	c := Default()
	c.Backend = "cpu"
	if err := c.ApplyEnv(env(map[string]string{"GLUA_BACKEND": "  "})); err != nil {
		t.Fatal(err)
	}
	if c.Backend != "cpu" {
		t.Errorf("a blank GLUA_BACKEND changed backend to %q", c.Backend)
	}
}

// A bad value in the environment must not send the user looking in the
// file.
func TestBadEnvironmentValueNamesTheVariable(t *testing.T) {
	path := filepath.Join("testdata", "cpu_small.toml")
	cases := []struct{ name, value, want string }{
		{"GLUA_HARD_MEMORY_LIMIT", "lots", `config: $GLUA_HARD_MEMORY_LIMIT: "lots" is not a size`},
		{"GLUA_SOFT_MEMORY_LIMIT", "101%", `config: $GLUA_SOFT_MEMORY_LIMIT: "101%": a percentage must be`},
		{"GLUA_BACKEND", "gpu", `config: $GLUA_BACKEND: "gpu" is not one of auto, cuda, cpu`},
		{"GLUA_MEMORY_POOL", "arena", `config: $GLUA_MEMORY_POOL: "arena" is not one of caching, cuda, none`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(path, env(map[string]string{tc.name: tc.value}))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to start with %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), path) {
				t.Errorf("error %q blames the file", err)
			}
		})
	}
}

func TestEncodeReadsBackTheSame(t *testing.T) {
	c, err := LoadFile(filepath.Join("testdata", "cpu_small.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(buf.String(), "encoded")
	if err != nil {
		t.Fatalf("Parse of Encode output: %v\n%s", err, buf.String())
	}
	back.Source, back.origins = c.Source, c.origins
	if !reflect.DeepEqual(back, c) {
		t.Errorf("Encode then Parse gives\n%+v\nwant\n%+v", back, c)
	}
}

func TestCPUCapacityDefaultsToHalfTheMachine(t *testing.T) {
	total := MachineMemory()
	if total == 0 {
		t.Skip("the machine's memory is not known here")
	}
	got, err := Default().CPUCapacity()
	if err != nil || got != total/2 {
		t.Errorf("default CPU capacity %d (%v), want half of %d", got, err, total)
	}
}

func TestGluaCPUMemorySetsTheCapacityAndABadOneIsNamed(t *testing.T) {
	c, err := Load("", env(map[string]string{"GLUA_CPU_MEMORY": "3GiB"}))
	if err != nil || c.CPU.Memory != "3GiB" {
		t.Fatalf("GLUA_CPU_MEMORY=3GiB gave %q (%v)", c.CPU.Memory, err)
	}
	_, err = Load("", env(map[string]string{"GLUA_CPU_MEMORY": "lots"}))
	if err == nil || !strings.Contains(err.Error(), "GLUA_CPU_MEMORY") {
		t.Errorf("GLUA_CPU_MEMORY=lots: %v", err)
	}
}

func TestGluaHostMemoryLimitIsReadAndChecked(t *testing.T) {
	c, err := Load("", env(map[string]string{"GLUA_HOST_MEMORY_LIMIT": "25%"}))
	if err != nil || c.Host.MemoryLimit != "25%" {
		t.Fatalf("GLUA_HOST_MEMORY_LIMIT=25%%: %q (%v)", c.Host.MemoryLimit, err)
	}
	if n, err := c.HostMemoryLimit(); err != nil || (MachineMemory() > 0 && n != MachineMemory()/4) {
		t.Errorf("HostMemoryLimit() = %d (%v)", n, err)
	}
	if _, err := Parse("[host]\nmemory_limit = \"lots\"", "bad.toml"); err == nil || !strings.Contains(err.Error(), "host.memory_limit") {
		t.Errorf("a bad host limit: %v", err)
	}
}

func TestPinnedLimitDefaultsToAQuarterAndIsReadAndChecked(t *testing.T) {
	if got := Default().Host.PinnedLimit; got != "25%" {
		t.Fatalf("default pinned limit %q, want 25%%", got)
	}
	c, err := Load("", env(map[string]string{"GLUA_PINNED_LIMIT": "2GiB"}))
	if err != nil || c.Host.PinnedLimit != "2GiB" {
		t.Fatalf("GLUA_PINNED_LIMIT=2GiB: %q (%v)", c.Host.PinnedLimit, err)
	}
	if n, err := c.PinnedLimit(); err != nil || n != 2<<30 {
		t.Errorf("PinnedLimit() = %d (%v)", n, err)
	}
	if _, err := Load("", env(map[string]string{"GLUA_PINNED_LIMIT": "lots"})); err == nil || !strings.Contains(err.Error(), "GLUA_PINNED_LIMIT") {
		t.Errorf("GLUA_PINNED_LIMIT=lots: %v", err)
	}
	if _, err := Parse("[host]\npinned_limit = \"lots\"", "bad.toml"); err == nil || !strings.Contains(err.Error(), "host.pinned_limit") {
		t.Errorf("a bad pinned limit: %v", err)
	}
}
