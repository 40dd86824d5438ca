package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// tomlKeys lists the keys of a struct type as "table.key", by the toml tags.
func tomlKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("toml")
		switch {
		case tag == "-" || !f.IsExported():
		case f.Type.Kind() == reflect.Struct:
			keys = append(keys, tomlKeys(f.Type, prefix+tag+".")...)
		default:
			keys = append(keys, prefix+tag)
		}
	}
	return keys
}

// fileKeys lists the keys a TOML text sets, tables left out, in its order.
func fileKeys(t *testing.T, text string) []string {
	var v map[string]any
	md, err := toml.Decode(text, &v)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range md.Keys() {
		if md.Type(k...) != "Hash" {
			keys = append(keys, k.String())
		}
	}
	return keys
}

func TestEveryKeyHasAnEnvironmentVariableDocumentedInConfigToml(t *testing.T) {
	var names, vars []string
	for _, k := range Keys {
		names = append(names, k.Name)
		vars = append(vars, k.Env)
	}
	data, err := os.ReadFile(filepath.Join("..", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fileKeys(t, string(data)); !slices.Equal(names, want) {
		t.Errorf("Keys names\n%q\nconfig.toml has, in order,\n%q", names, want)
	}
	want := tomlKeys(reflect.TypeOf(Config{}), "")
	if slices.Sort(want); !slices.Equal(slices.Sorted(slices.Values(names)), want) {
		t.Errorf("Keys names\n%q\nconfig.Config has\n%q", names, want)
	}
	seen := map[string]bool{}
	for _, v := range vars {
		if !strings.HasPrefix(v, "GLUA_") || seen[v] {
			t.Errorf("environment variable %q is not GLUA_* or is used twice", v)
		}
		seen[v] = true
		if !regexp.MustCompile(`(?m)^#\s+` + v + `\s`).Match(data) {
			t.Errorf("config.toml's list of variables lacks %s", v)
		}
	}
}

func TestEnvironmentSetsKeysOfEveryKind(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	c, err := Load("", env(map[string]string{
		"GLUA_DEVICE":       " 1 ",
		"GLUA_POOL_DEBUG":   "true",
		"GLUA_LIBCUDA":      "/opt/libcuda.so.1, libcuda.so.1,",
		"GLUA_REPL_HISTORY": "off",
		"GLUA_KERNEL_CACHE": "/tmp/kernels",
		"GLUA_DIST_TIMEOUT": "90s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.CUDA.Device != 1 || !c.Pool.Debug || !slices.Equal(c.CUDA.LibCUDA, []string{"/opt/libcuda.so.1", "libcuda.so.1"}) ||
		c.REPL.History != "off" || c.CUDA.KernelCache != "/tmp/kernels" || c.Dist.Timeout != "90s" {
		t.Errorf("the environment gave %+v", c)
	}
}

func TestBadEnvironmentValueOfAnyKindNamesTheVariable(t *testing.T) {
	cases := []struct{ name, value, want string }{
		{"GLUA_CPU_THREADS", "four", `config: $GLUA_CPU_THREADS: "four" is not a whole number`},
		{"GLUA_DEVICE", "-1", `config: $GLUA_DEVICE: -1 is negative`},
		{"GLUA_POOL_DEBUG", "yes please", `config: $GLUA_POOL_DEBUG: "yes please" is not true or false`},
		{"GLUA_LIBNVRTC", " , ", `config: $GLUA_LIBNVRTC: needs at least one library name`},
		{"GLUA_LUA_CALL_DEPTH", "10", `config: $GLUA_LUA_CALL_DEPTH: 10 is less than 64`},
		{"GLUA_DIST_TIMEOUT", "5 minutes", `config: $GLUA_DIST_TIMEOUT: "5 minutes" is not a duration (e.g. 5m, 90s)`},
		{"GLUA_DIST_TIMEOUT", "0s", `config: $GLUA_DIST_TIMEOUT: "0s" is not a positive duration`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", "cpu_small.toml"), env(map[string]string{tc.name: tc.value}))
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestOriginSaysWhereEachValueCameFrom(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "cpu_small.toml"), env(map[string]string{"GLUA_MEMORY_POOL": "none"}))
	if err != nil {
		t.Fatal(err)
	}
	copied := c
	if err := c.Set("pool.hard_limit", "1GiB", "--hard-limit"); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"backend":         "file",
		"pool.strategy":   "$GLUA_MEMORY_POOL",
		"pool.hard_limit": "--hard-limit",
		"pool.soft_limit": "default",
	} {
		if got := c.Origin(key); got != want {
			t.Errorf("Origin(%s) = %q, want %q", key, got, want)
		}
	}
	if got := copied.Origin("pool.hard_limit"); got != "file" {
		t.Errorf("a copy made before Set sees origin %q", got)
	}
}

func TestSetRefusesABadValueAndKeepsTheOldOne(t *testing.T) {
	c := Default()
	if err := c.Set("pool.hard_limit", "lots", "--hard-limit"); err == nil || !strings.HasPrefix(err.Error(), `"lots" is not a size`) {
		t.Errorf("Set of a bad limit: %v", err)
	}
	if err := c.Set("pool.hardlimit", "1GiB", "--x"); err == nil || err.Error() != "unknown key pool.hardlimit" {
		t.Errorf("Set of an unknown key: %v", err)
	}
	if c.Pool.HardLimit != "" || c.Origin("pool.hard_limit") != "default" {
		t.Errorf("a refused Set changed the configuration: %q from %s", c.Pool.HardLimit, c.Origin("pool.hard_limit"))
	}
}

func TestWriteSettingsShowsEveryKeyValueOriginAndVariable(t *testing.T) {
	c := Default()
	if err := c.Set("cuda.device", "2", "--device"); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.WriteSettings(&b); err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys {
		line := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(k.Name) + ` +(.+?) +(\S+) +` + k.Env + `$`).FindStringSubmatch(b.String())
		if line == nil {
			t.Errorf("no line for %s in\n%s", k.Name, b.String())
			continue
		}
		wantFrom := "default"
		if k.Name == "cuda.device" {
			wantFrom = "--device"
		}
		if line[1] != c.Value(k.Name) || line[2] != wantFrom {
			t.Errorf("%s: value %s from %s; want %s from %s", k.Name, line[1], line[2], c.Value(k.Name), wantFrom)
		}
	}
	if got := c.Value("cuda.libcuda"); got != `["libcuda.so.1", "libcuda.so"]` {
		t.Errorf("a list is written %s", got)
	}
}

func TestHistoryFileIsInTheHomeDirectoryOrNone(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for history, want := range map[string]string{
		"~/.glua_history": filepath.Join(home, ".glua_history"),
		"/var/h":          "/var/h",
		"off":             "",
		"":                "",
	} {
		c := Default()
		c.REPL.History = history
		if got, err := c.HistoryFile(); err != nil || got != want {
			t.Errorf("history %q: HistoryFile() = %q, %v; want %q", history, got, err, want)
		}
	}
}

func TestDistTimeoutDefaultsToOneMinute(t *testing.T) {
	d, err := Default().DistTimeout()
	if err != nil || d != time.Minute {
		t.Errorf("DistTimeout() = %v, %v; want 1m", d, err)
	}
}
