package runtime_test

import (
	"slices"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// glua's modules come from the registry the bindings package fills; a
// second module under one of their names is a programming error.
func TestModulesComeFromTheRegistry(t *testing.T) {
	mods := runtime.Modules()
	for _, name := range []string{"cuda", "kernels", "pool"} {
		if !slices.Contains(mods, name) {
			t.Fatalf("Modules() = %v, missing %s", mods, name)
		}
	}
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, `RegisterModule called twice for module "pool"`) {
			t.Fatalf("registering pool twice: panic %v", r)
		}
		if got := runtime.Modules(); !slices.Equal(got, mods) {
			t.Fatalf("Modules() = %v after the refused registration, want %v", got, mods)
		}
	}()
	runtime.RegisterModule(runtime.Module{Name: "pool", Open: func(*runtime.Runtime, *lua.LState) int { return 0 }})
}
