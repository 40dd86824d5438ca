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

// os.date is C's strftime in the C locale over gmtime and localtime, for
// every conversion glibc knows, around year and ISO-week boundaries.
func TestOsDateIsStrftimes(t *testing.T) {
	src := `for _, t in ipairs({0, -1, 86399, 951782400, 1700000000, 1704067199, 1704067200, 1735603200, 1230768000, 1262217600, 2^31, -2^31, 4102444800, 253402300799, 1e12}) do
  print(os.date("!%a %A %b %B %c|%C %d %D %e %F %g %G %H %I %j %k %l %m %M %p %r %R %s %S %T %u %U %V %w %W %x %X %y %Y %z %Z %%", t))
  print(os.date("%c %Z %z %j", t))
  local d = os.date("*t", t) print(d.year, d.month, d.day, d.hour, d.yday, d.wday, d.isdst)
end
print(os.date("!%Y", 2^60), os.date("!%Y", 0/0), os.date("!%Y", -2^62), os.date("x%"), os.date("!%E%O%q%"))`
	if got, want := runGlua(t, src), runLua51(t, src); got != want {
		t.Errorf("glua:\n%s\nlua5.1:\n%s", got, want)
	}
}
