package lua51

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// With gopher-lua's slice of integer keys cut to 63 slots, lists of 100
// and 300 elements go on into its map, as lists past 2^26 elements do:
// their length, and every function that walks them, is still Lua 5.1's.
func TestListsPastTheSliceKeepTheirLength(t *testing.T) {
	old := lua.MaxArrayIndex
	lua.MaxArrayIndex = 64
	defer func() { lua.MaxArrayIndex = old }()
	list := `local t = {} for i = 1, 300 do t[i] = i end `
	checkCases(t, []luaCase{
		{name: "#, getn and ipairs", src: list + `local n = 0 for _ in ipairs(t) do n = n + 1 end print(#t, table.getn(t), n, t[#t])`,
			want: "300\t300\t300\t300"},
		{name: "unpack, concat and foreachi", src: list + `local s = 0 table.foreachi(t, function(i, v) s = s + v end)
print(select("#", unpack(t)), #table.concat(t, ","), s)`,
			want: "300\t1091\t45150"},
		{name: "insert and remove past the slice", src: list + `table.insert(t, 100, "x") table.insert(t, "y") print(#t, t[100], t[101], t[302])
print(table.remove(t, 100), table.remove(t), #t, t[300])`,
			want: "302\tx\t100\ty\nx\ty\t300\t300"},
		{name: "appending with #", src: `local t = {} for i = 1, 100 do t[#t + 1] = i end print(#t, t[64], t[100])`,
			want: "100\t64\t100"},
		{name: "sort", src: list + `table.sort(t, function(a, b) return a > b end) print(t[1], t[64], t[300], #t)`,
			want: "300\t237\t1\t300"},
		{name: "insert below 1 moves t[0] too", src: `local t = {1, 2, 3, [0] = "z"} table.insert(t, -1, "x") print(t[-1], t[0], t[1], t[2], t[4])`,
			want: "x\tnil\tz\t1\t3"},
	})
}

// A store that would append many nils to the slice asks the memory limit
// first, so that it is refused before the gigabyte is built.
func TestSparseIntegerKeysAskTheMemoryLimit(t *testing.T) {
	old := growthCheck
	var asked []int
	growthCheck = func(L *lua.LState, n int) {
		asked = append(asked, n)
		L.Error(lua.LString("not enough memory"), 0) // as the limit raises it
	}
	defer func() { growthCheck = old }()
	for _, src := range []string{
		`local t = {} t[6e7] = 1`,
		`rawset({}, 6e7, 1)`,
		`table.insert({}, 6e7, 1)`,
		`local t = {1, 2} t[2^26 - 1] = 1`,
	} {
		asked = nil
		if got := runGlua(t, `print(pcall(function() `+src+` end))`); got != "false\tnot enough memory" || len(asked) != 1 || asked[0] < 16*6e7 && src != `local t = {1, 2} t[2^26 - 1] = 1` {
			t.Errorf("%s: printed %q, asked for %v bytes", src, got, asked)
		}
	}
	// near the slice's end, in the map's range, and not integers: no ask
	asked = nil
	if got := runGlua(t, `local t = {} for i = 1, 1000 do t[i] = i end t[5000] = 1 t[2^26] = 1 t[1e9] = 1 t[6e7 + 0.5] = 1 print(#t >= 1000)`); got != "true" || len(asked) != 0 {
		t.Errorf("printed %q, asked for %v bytes", got, asked)
	}
}
