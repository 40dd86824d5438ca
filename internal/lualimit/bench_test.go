package lualimit

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// BenchmarkCounters runs plain Lua with the counted instructions and with
// the handlers they replaced, to measure what counting costs:
//
//	go test ./internal/lualimit -run - -bench Counters -count 5
func BenchmarkCounters(b *testing.B) {
	scripts := map[string]string{
		"numeric": `local s = 0 for i = 1, 1e6 do s = s + (i % 7) * 0.5 - (i % 3) end`,
		"calls":   `local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end fib(22)`,
		"while":   `local i, t = 0, {} while i < 1e6 do i = i + 1 t[i % 64 + 1] = i end`,
	}
	for _, name := range []string{"numeric", "calls", "while"} {
		for _, counted := range []bool{true, false} {
			label := name + "/counted"
			if !counted {
				label = name + "/plain"
			}
			b.Run(label, func(b *testing.B) {
				if !counted {
					saved := jumpTable
					for i, op := range countedOps {
						jumpTable[op] = before[i]
					}
					defer func() { jumpTable = saved }()
				}
				L := lua.NewState()
				defer L.Close()
				fn, err := L.LoadString(scripts[name])
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					L.Push(fn)
					L.Call(0, 0)
				}
			})
		}
	}
}
