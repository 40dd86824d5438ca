package runtime

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/luac"
)

// A map function written inline in a loop is a new Lua value each time
// round but one syntax tree: it is translated once. One the map language
// refuses is refused each time and never cached.
func TestKernelPartTranslatesAMapFunctionOncePerSyntaxTree(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	fn, err := luac.LoadString(L, `local fs = {}
for i = 1, 2 do fs[i] = function(x) return x * 2 end end
return fs[1], fs[2], function(x) return x .. "s" end`, "@map.lua")
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	if err := L.PCall(0, 3, nil); err != nil {
		t.Fatal(err)
	}
	first, ok1 := luac.FunctionTree(L.Get(-3).(*lua.LFunction))
	second, ok2 := luac.FunctionTree(L.Get(-2).(*lua.LFunction))
	bad, ok3 := luac.FunctionTree(L.Get(-1).(*lua.LFunction))
	if !ok1 || !ok2 || !ok3 {
		t.Fatal("no syntax tree recorded")
	}
	var k kernelPart
	a, err := k.maps.function(first, "map.lua")
	if err != nil {
		t.Fatal(err)
	}
	b, err := k.maps.function(second, "map.lua")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("the same function literal, made twice, was translated twice")
	}
	for range 2 {
		if _, err := k.maps.function(bad, "map.lua"); err == nil || !strings.Contains(err.Error(), "map.lua") {
			t.Fatalf("a map function with string concatenation: err %v, want an error naming map.lua", err)
		}
	}
	if len(k.maps.fns) != 1 {
		t.Fatalf("%d translations cached, want 1", len(k.maps.fns))
	}
}

// The temporaries partial overlaps took are counted with their bytes.
func TestKernelPartCountsOverlapTemporariesAndTheirBytes(t *testing.T) {
	var k kernelPart
	k.overlaps.count(64)
	k.overlaps.count(36)
	if n, nbytes := k.overlaps.temporaries(); n != 2 || nbytes != 100 {
		t.Fatalf("temporaries %d of %d bytes, want 2 of 100", n, nbytes)
	}
}
