package luac

import (
	"fmt"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
)

// bigFunctionsSource is a chunk whose functions each hold thousands of
// literals (glua once ran parts of such functions in functions of their
// own, which shifted error levels). Each raises error at levels 1 to 3, directly and through a helper,
// under pcall, and asks debug.getinfo for its caller's line.
func bigFunctionsSource() string {
	var b strings.Builder
	filler := func() {
		for i := 1; i <= 2100; i++ {
			fmt.Fprintf(&b, "  data[%d] = %d.5\n", i, i)
		}
	}
	b.WriteString("local data = {}\n")
	b.WriteString("local function thrower(level) error(\"thrown\", level) end\n")
	b.WriteString("local function value(level) if level then error(\"in table\", level) end return 1 end\n")
	b.WriteString("local function line() return debug.getinfo(3, \"l\").currentline end\n")
	b.WriteString("local function statements(level, direct)\n")
	filler()
	b.WriteString("  if direct then error(\"direct\", level) elseif level then thrower(level) end\n")
	b.WriteString("  print(\"caller line\", line())\n")
	filler()
	b.WriteString("end\n")
	b.WriteString("local function hoisted(level)\n")
	filler()
	b.WriteString("  local t = {\"a\", \"b\", value(level)}\n")
	b.WriteString("  return t\nend\n")
	b.WriteString("local function split(level)\n  local t = {\n")
	for i := 1; i <= 1500; i++ {
		fmt.Fprintf(&b, "    %d.25,\n", i)
	}
	b.WriteString("    value(level),\n  }\n  return t\nend\n")
	b.WriteString(`
local function try(name, f, ...)
  print(name, pcall(f, ...))
end
for level = 1, 3 do
  try("direct " .. level, statements, level, true)
  try("helper " .. level, statements, level, false)
  try("hoisted " .. level, hoisted, level)
  try("split " .. level, split, level)
end
statements()
`)
	return b.String()
}

func TestErrorLevelsSkipTheFunctionsThatKeepLiteralsApart(t *testing.T) {
	src := bigFunctionsSource()
	want := runLua51(t, src)
	L := lua.NewState()
	defer L.Close()
	lua51.Open(L)
	fn, err := LoadString(L, src, "=stdin")
	if err != nil {
		t.Fatalf("LoadString: %v", err)
	}
	got := runCaptured(t, L, fn)
	if got != want {
		t.Errorf("printed\n%s\nlua5.1 prints\n%s", got, want)
	}
}
