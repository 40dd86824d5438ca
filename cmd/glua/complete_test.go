package main

import (
	"slices"
	"sync"
	"testing"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/runtime"
)

func TestSplitNameFindsWhatIsBeingTyped(t *testing.T) {
	cases := []struct {
		text   string
		path   []string
		sep    byte
		prefix string
		ok     bool
	}{
		{"pri", nil, 0, "pri", true},
		{"x = cuda.to_", []string{"cuda"}, '.', "to_", true},
		{"print(x:co", []string{"x"}, ':', "co", true},
		{"a.b.c", []string{"a", "b"}, '.', "c", true},
		{"t.", []string{"t"}, '.', "", true},
		{"", nil, 0, "", false},
		{"x = ", nil, 0, "", false},
		{"1.5", nil, 0, "", false},
		{"a:b.c", nil, 0, "", false},
		{"a..b", nil, 0, "", false},
	}
	for _, tc := range cases {
		path, sep, prefix, ok := splitName(tc.text)
		if !slices.Equal(path, tc.path) || sep != tc.sep || prefix != tc.prefix || ok != tc.ok {
			t.Errorf("splitName(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tc.text, path, sep, prefix, ok, tc.path, tc.sep, tc.prefix, tc.ok)
		}
	}
}

// complete is what Tab offers after text: the names that complete the one
// being typed.
func complete(c *completer, text string) []string {
	endings, n := c.Do([]rune(text), len([]rune(text)))
	typed := []rune(text)
	var names []string
	for _, e := range endings {
		names = append(names, string(typed[len(typed)-n:])+string(e))
	}
	return names
}

func TestCompleterOffersGlobalsFieldsAndMethods(t *testing.T) {
	cfg := config.Default()
	cfg.Backend, cfg.CPU.Memory = "cpu", "64MiB"
	rt, err := runtime.New(runtime.Options{Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	L := rt.Lua()
	bindGlobals(L)
	if err := doString(L, `x = cuda.zeros({2, 2}) h = cuda.host_array({2, 2}) big = cuda.zeros({1, 1, 1, 1, 1}) s = "text" obj = setmetatable({own = 1}, {__index = {inherited = print}})`, "setup"); err != nil {
		t.Fatal(err)
	}
	c := &completer{L: L, busy: &sync.Mutex{}}
	cases := []struct {
		text string
		want []string
	}{
		{"cuda.to_", []string{"to_device"}},
		{"x:copy", []string{"copy_from", "copy_to_host"}},
		{"h:re", []string{"reshape"}},             // HostArray's __index is a function
		{"big:copy_to", []string{"copy_to_host"}}, // so is a 5-D DeviceArray's
		{"h:f", []string{"flush"}},
		{"x:nb", nil},                // a field, not a method
		{"x.nb", []string{"nbytes"}}, // which '.' offers
		{"kern", []string{"kernels"}},
		{"whi", []string{"while"}},
		{"s:up", []string{"upper"}},
		{"obj.", []string{"inherited", "own"}},
		{"nothing.at", nil},
	}
	for _, tc := range cases {
		if got := complete(c, tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Tab after %q offers %q, want %q", tc.text, got, tc.want)
		}
	}
	c.busy.Lock()
	defer c.busy.Unlock()
	if got := complete(c, "cuda.to_"); got != nil {
		t.Errorf("while a statement runs, Tab offers %q", got)
	}
}
