package lua51

import (
	"path/filepath"
	"testing"
)

func TestFileErrorsAndOsTimeAsLua51(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	q := `"` + missing + `"`
	checkCases(t, []luaCase{
		{name: "io.open, os.remove and os.rename say strerror and errno", src: `print(io.open(` + q + `)) print(os.remove(` + q + `)) print(os.rename(` + q + `, ` + q + `))`,
			want: "nil\t" + missing + ": No such file or directory\t2\nnil\t" + missing + ": No such file or directory\t2\nnil\t" + missing + ": No such file or directory\t2"},
		{name: "io.lines of a missing file raises", src: `print(pcall(io.lines, ` + q + `))`,
			want: "false\tbad argument #1 to '?' (" + missing + ": No such file or directory)"},
		{name: "os.time needs day, month and year", src: `print(pcall(os.time, {year = 2020})) print(pcall(os.time, {year = 2020, day = 1}))
print(os.time({year = "2020", month = "2", day = 3, hour = 0}) - os.time({year = 2020, month = 2, day = 2, hour = 0}))`,
			want: "false\tfield 'day' missing in date table\nfalse\tfield 'month' missing in date table\n86400"},
	})
}
