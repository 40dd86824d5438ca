package runtime

import (
	"bytes"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// print writes its arguments separated by tabs, numbers as Lua 5.1's
// tostring writes them, to the writer the runtime was given.
func TestScriptPartPrintWritesTabSeparatedAsLua51(t *testing.T) {
	var out bytes.Buffer
	s := scriptPart{stdout: &out}
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("print", L.NewFunction(s.print))
	if err := L.DoString(`print(1, 0.1, 1e100, "a", nil, true) print()`); err != nil {
		t.Fatal(err)
	}
	if want := "1\t0.1\t1e+100\ta\tnil\ttrue\n\n"; out.String() != want {
		t.Fatalf("print wrote %q, want %q", out.String(), want)
	}
}

// A resource whose userdata the latest walk did not reach is released,
// once; one it reached stays held.
func TestScriptPartReleasesOnlyResourcesTheWalkDidNotReach(t *testing.T) {
	var s scriptPart
	kept, dropped := &lua.LUserData{}, &lua.LUserData{}
	var keptReleases, droppedReleases int
	s.holdResource(kept, 1, func() error { keptReleases++; return nil })
	s.holdResource(dropped, 1, func() error { droppedReleases++; return nil })
	for mark := uint32(2); mark <= 3; mark++ {
		s.reached(kept, mark)
		s.releaseUnreached(mark)
	}
	if keptReleases != 0 || droppedReleases != 1 {
		t.Fatalf("releases: reached %d, unreached %d; want 0 and 1", keptReleases, droppedReleases)
	}
}
