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
