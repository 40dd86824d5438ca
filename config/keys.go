package config

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/BurntSushi/toml"
)

// A Key is one setting of config.toml and the environment variable that
// overrides the file's value.
type Key struct {
	Name string // the table and the key, as errors write it: "pool.hard_limit"
	Env  string // "GLUA_HARD_MEMORY_LIMIT"
}

// Keys lists every key of config.toml in the file's order. Each has an
// environment variable, so that any setting can be changed for one run
// without editing a file; glua's flags set some of them too.
var Keys = []Key{
	{"backend", "GLUA_BACKEND"},
	{"pool.strategy", "GLUA_MEMORY_POOL"},
	{"pool.soft_limit", "GLUA_SOFT_MEMORY_LIMIT"},
	{"pool.hard_limit", "GLUA_HARD_MEMORY_LIMIT"},
	{"pool.debug", "GLUA_POOL_DEBUG"},
	{"pool.gc_percent", "GLUA_GC_PERCENT"},
	{"cpu.memory", "GLUA_CPU_MEMORY"},
	{"cpu.threads", "GLUA_CPU_THREADS"},
	{"host.memory_limit", "GLUA_HOST_MEMORY_LIMIT"},
	{"host.pinned_limit", "GLUA_PINNED_LIMIT"},
	{"cuda.device", "GLUA_DEVICE"},
	{"cuda.libcuda", "GLUA_LIBCUDA"},
	{"cuda.libnvrtc", "GLUA_LIBNVRTC"},
	{"cuda.libcublas", "GLUA_LIBCUBLAS"},
	{"cuda.libnccl", "GLUA_LIBNCCL"},
	{"cuda.kernel_cache", "GLUA_KERNEL_CACHE"},
	{"lua.call_depth", "GLUA_LUA_CALL_DEPTH"},
	{"lua.stack_slots", "GLUA_LUA_STACK_SLOTS"},
	{"lua.memory_limit", "GLUA_LUA_MEMORY_LIMIT"},
	{"repl.history", "GLUA_REPL_HISTORY"},
	{"dist.timeout", "GLUA_DIST_TIMEOUT"},
}

// Env names the environment variables glua reads: GLUA_CONFIG, then each
// key's.
var Env = func() []string {
	names := []string{"GLUA_CONFIG"}
	for _, k := range Keys {
		names = append(names, k.Env)
	}
	return names
}()

// Set sets key from text as the environment or a flag gives it: strings
// as they are, numbers in decimal, booleans as true or false, lists with
// their items separated by commas. The value is checked as the file's
// would be. origin is where it came from ("$GLUA_BACKEND", "--backend"),
// for Origin. An error names neither the key nor the origin, which the
// caller knows how the user wrote.
func (c *Config) Set(key, text, origin string) error {
	next := *c
	f, ok := next.field(key)
	if !ok {
		return fmt.Errorf("unknown key %s", key)
	}
	if err := setText(f, text); err != nil {
		return err
	}
	if err := next.check(key); err != nil {
		return err
	}
	next.origins = withOrigin(c.origins, key, origin)
	*c = next
	return nil
}

// setText parses text into f by f's kind.
func setText(f reflect.Value, text string) error {
	switch f.Kind() {
	case reflect.String:
		f.SetString(text)
	case reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%q is not a whole number", text)
		}
		f.SetInt(int64(n))
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%q is not true or false", text)
		}
		f.SetBool(b)
	case reflect.Slice:
		var items []string
		for _, item := range strings.Split(text, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, item)
			}
		}
		f.Set(reflect.ValueOf(items))
	default:
		return fmt.Errorf("cannot set a %s from text", f.Kind())
	}
	return nil
}

// field is key's field in c, found by the toml tags.
func (c *Config) field(key string) (reflect.Value, bool) {
	v := reflect.ValueOf(c).Elem()
	for _, name := range strings.Split(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		found := false
		for i := range v.NumField() {
			if v.Type().Field(i).Tag.Get("toml") == name {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return reflect.Value{}, false
		}
	}
	return v, v.Kind() != reflect.Struct
}

// withOrigin is origins with key's origin set, in a new map: copies of a
// Config share the old one.
func withOrigin(origins map[string]string, key, origin string) map[string]string {
	m := maps.Clone(origins)
	if m == nil {
		m = map[string]string{}
	}
	m[key] = origin
	return m
}

// Origin says where key's value came from: "default", "file" (Source),
// or what Set was told, such as "$GLUA_BACKEND" or "--backend".
func (c Config) Origin(key string) string {
	if o, ok := c.origins[key]; ok {
		return o
	}
	return "default"
}

// Value is key's value as config.toml writes it ("" for an unknown key).
func (c Config) Value(key string) string {
	f, ok := c.field(key)
	if !ok {
		return ""
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]any{"v": f.Interface()}); err != nil {
		return fmt.Sprint(f.Interface())
	}
	return strings.TrimSpace(strings.TrimPrefix(b.String(), "v = "))
}

// WriteSettings writes every key's value, where it came from and the
// environment variable that sets it, one key a line, for glua --info.
func (c Config) WriteSettings(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  key\tvalue\tfrom\tenvironment variable")
	for _, k := range Keys {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", k.Name, c.Value(k.Name), c.Origin(k.Name), k.Env)
	}
	return tw.Flush()
}
