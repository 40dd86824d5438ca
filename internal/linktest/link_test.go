package linktest

import (
	"strings"
	"testing"

	_ "github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/runtime"
)

func TestWhatIsNotLinkedIsNamed(t *testing.T) {
	rt, err := runtime.New(runtime.Options{Backend: "cpu", CPUMemory: "64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	err = rt.DoString(`require("cuda")`)
	if err == nil || !strings.Contains(err.Error(), `import _ "github.com/gluaproject/glua/bindings"`) {
		t.Fatalf("require without bindings linked: %v", err)
	}
	if err := rt.SetGlobal("x", 1); err == nil || !strings.Contains(err.Error(), `import "github.com/gluaproject/glua"`) {
		t.Fatalf("SetGlobal without bindings linked: %v", err)
	}
	if mods := runtime.Modules(); len(mods) != 0 {
		t.Fatalf("Modules() = %v with no module linked", mods)
	}
	_, err = runtime.New(runtime.Options{Backend: "cuda"})
	if err == nil || !strings.Contains(err.Error(), `backend "cuda" is not linked`) || !strings.Contains(err.Error(), `glua/cuda`) {
		t.Fatalf("a backend this program does not link: %v", err)
	}
}
