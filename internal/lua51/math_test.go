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

func TestMathNaNsHaveGlibcsSign(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "made from numbers", src: `print(math.sin(1/0), math.cos(-1/0), math.tan(1/0), math.log(-1), math.log(-1/0), math.log10(-1), math.asin(2), math.acos(-1/0))`,
			want: "-nan\t-nan\t-nan\t-nan\t-nan\tnan\tnan\tnan"},
		{name: "a NaN argument comes back", src: `local N, P = 0/0, -(0/0)
print(math.sin(N), math.sin(P), math.cos(N), math.cosh(N), math.log10(N), math.asin(P), math.acos(N))
print(math.atan2(N, 2), math.atan2(2, P), math.atan2(N, P), math.atan2(P, N))`,
			want: "-nan\tnan\t-nan\t-nan\t-nan\tnan\t-nan\n-nan\tnan\tnan\t-nan"},
		{name: "pow squares a NaN", src: `local N, P = 0/0, -(0/0)
print(N^3, P^3, N^2, N^0.5, math.pow(N, 1), math.pow(N, -3), math.pow(3, N), math.pow(N, P), math.pow(P, N))`,
			want: "nan\tnan\t-nan\t-nan\tnan\tnan\t-nan\t-nan\tnan"},
	})
}

func TestRadDegAndModfAreLmathlibs(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "rad and deg by pi/180", src: `print(math.rad(1e308), math.deg(1e306), math.rad(180) == math.pi, math.deg(math.pi))
print(string.format("%.17g %.17g", math.rad(3), math.deg(3)))`,
			want: "1.7453292519943e+306\t5.7295779513082e+307\ttrue\t180\n0.05235987755982989 171.88733853924697"},
		{name: "modf of infinities", src: `print(math.modf(1/0)) print(math.modf(-1/0)) print(math.modf(-2.5))`,
			want: "inf\t0\n-inf\t-0\n-2\t-0.5"},
	})
}

// lmathlib.c passes luaL_checknumber(L, 1) and (L, 2) to C as arguments,
// and gcc evaluates the second first.
func TestMathFunctionsOfTwoNumbersCheckTheSecondFirst(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "argument #2 named", src: `for _, f in ipairs({"fmod", "mod", "pow", "atan2", "ldexp"}) do print(pcall(math[f], "x")) end`,
			want: "false\tbad argument #2 to '?' (number expected, got no value)\nfalse\tbad argument #2 to '?' (number expected, got no value)\n" +
				"false\tbad argument #2 to '?' (number expected, got no value)\nfalse\tbad argument #2 to '?' (number expected, got no value)\n" +
				"false\tbad argument #2 to '?' (number expected, got no value)"},
	})
}
