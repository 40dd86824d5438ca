package lua51

import "testing"

func TestMathHugeIsInfinity(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "huge", src: `print(math.huge == 1/0, -math.huge == -1/0, math.huge > 1.7976931348623157e308)`,
			want: "true\ttrue\ttrue"},
	})
}

func TestMathModIsFmod(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "mod keeps the sign of x", src: `print(math.mod(7, 3), math.mod(-7, 3), math.mod(7, -3), math.mod(5.5, 2))`,
			want: "1\t-1\t1\t1.5"},
	})
}

// Near ±1 Go's acos and asin cancel (acos(0.99999999) was 3e-10 off);
// glua's agree with lua5.1's to the digits Lua prints, and with C's to
// 2 ulps everywhere.
func TestAcosAndAsinNearOneAreLua51s(t *testing.T) {
	src := `for _, x in ipairs({0.999614659696638, 0.99999999, 1 - 2^-40, -0.9996, -1 + 2^-30, 0.5, -0.5, 0.7071, 1e-9, 0, 1, -1, 2}) do
  print(string.format("%.15g %.15g", math.acos(x), math.asin(x)))
end`
	if got, want := runGlua(t, src), runLua51(t, src); got != want {
		t.Errorf("glua:\n%s\nlua5.1:\n%s", got, want)
	}
}
