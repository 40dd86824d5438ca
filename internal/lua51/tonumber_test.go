package lua51

import (
	"fmt"
	"strings"
	"testing"
)

var tonumberStrings = []string{
	"1e2", " 12 ", "\t12\r\n", "\v5\f", "0x10", "0X1f", " 0x10 ", "-0x10", "inf", "nan", "-inf",
	"INF", "Infinity", "nan(123)", "0x1p4", "0x1.8p1", "0x.8", "1e", "1e+", "", " ", "1_000",
	"0b101", "12a", ".5", "5.", ".", "-.5e-3", "+3", "1e500", "-1e500", "1e-400", "0x", "0x ", "12\000",
	"9007199254740993", "0x7fffffffffffffff", "0xffffffffffffffffff", "--1", "1 2", "١",
}

// tonumberScript prints tonumber(s) for each of strs, with %.14g so that
// both interpreters print numbers alike.
func tonumberScript(strs []string, base string) string {
	var b strings.Builder
	b.WriteString("local function show(v) if type(v) == 'number' then return string.format('%.14g', v) end return tostring(v) end\n")
	for _, s := range strs {
		b.WriteString("print(show(tonumber(" + luaQuote(s) + base + ")))\n")
	}
	return b.String()
}

func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' || c < ' ' || c >= 0x7f {
			fmt.Fprintf(&b, "\\%03d", c)
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

func TestTonumberReadsStringsAsLua51(t *testing.T) {
	want10 := "100\n12\n12\n5\n16\n31\n16\n-16\ninf\nnan\n-inf\ninf\ninf\nnan\n16\n3\n0.5\nnil\nnil\nnil\nnil\n" +
		"nil\nnil\nnil\n0.5\n5\nnil\n-0.0005\n3\ninf\n-inf\n0\nnil\nnil\n12\n9.007199254741e+15\n" +
		"9.2233720368548e+18\n4.7223664828696e+21\nnil\nnil\nnil"
	want16 := "482\n18\n18\n5\n16\n31\n16\n1.844674407371e+19\nnil\nnil\nnil\nnil\nnil\nnil\nnil\nnil\n" +
		"nil\n30\nnil\nnil\nnil\nnil\n45313\n298\nnil\nnil\nnil\nnil\n3\n124160\n1.8446744073709e+19\n" +
		"nil\nnil\nnil\n18\n1.0378291982571e+19\n9.2233720368548e+18\n1.844674407371e+19\nnil\nnil\nnil"
	checkCases(t, []luaCase{
		{name: "base 10", src: tonumberScript(tonumberStrings, ""), want: want10},
		{name: "base 16", src: tonumberScript(tonumberStrings, ", 16"), want: want16},
		{name: "other bases", src: `print(tonumber("ff", 16), tonumber("-ff", 16) == 2^64 - 255, tonumber("zz", 36), tonumber("8", 8),
tonumber("777", 8), tonumber("1010", 2), tonumber(10, 16), tonumber("1e2", 10), tonumber("0x10", 10))`,
			want: "255\ttrue\t1295\tnil\t511\t10\t16\t100\t16"},
		{name: "values that are not strings", src: `print(tonumber(nil), tonumber(true), tonumber({}), tonumber(5))`,
			want: "nil\tnil\tnil\t5"},
		{name: "bad arguments", src: `print((pcall(tonumber)), (pcall(tonumber, "1", 1)), (pcall(tonumber, "1", 37)), (pcall(tonumber, nil, 16)))`,
			want: "false\tfalse\tfalse\tfalse"},
	})
}
