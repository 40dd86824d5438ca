package lua51

import "testing"

// The amounts are the Go heap's, so only their kinds and relations are
// Lua 5.1's.
func TestGcinfoAndCountReportKilobytes(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "gcinfo is whole kilobytes, count a fraction", src: `
local kb, count = gcinfo(), collectgarbage("count")
print(type(kb), kb == math.floor(kb), kb > 0, type(count), math.abs(count - kb) < 1024)`,
			want: "number\ttrue\ttrue\tnumber\ttrue"},
	})
}

func TestCollectgarbageOptionsReturnWhatLua51Returns(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "collect", src: `print(collectgarbage(), collectgarbage("collect"))`, want: "0\t0"},
		{name: "stop and restart", src: `print(collectgarbage("stop"), collectgarbage("restart"))`, want: "0\t0"},
		{name: "setpause and setstepmul return the previous value", src: `
print(collectgarbage("setpause", 150), collectgarbage("setpause", 200), collectgarbage("setpause"))
print(collectgarbage("setstepmul", 400), collectgarbage("setstepmul", 200))`,
			want: "200\t150\t200\n200\t400"},
		{name: "step finishes a cycle sooner with a larger size", src: `
local function steps(size)
  collectgarbage()
  local n = 0
  repeat n = n + 1 until collectgarbage("step", size)
  return n
end
print(steps(0) >= steps(6), steps(6) <= steps(2), steps(1000000), collectgarbage("step", 1000000))`,
			want: "true\ttrue\t1\ttrue"},
		// Argument errors are worded as gopher-lua words them elsewhere.
		{name: "an invalid option",
			src:  `local ok, e = pcall(collectgarbage, "bogus") print(ok, e:find("bad argument #1 to .* %(invalid option 'bogus'%)") ~= nil)`,
			want: "false\ttrue"},
	})
}

func TestFilesHaveLua51sGc(t *testing.T) {
	checkCases(t, []luaCase{
		{"__gc checks its argument", `print(pcall(function() getmetatable(io.stdin).__gc() end))
print(pcall(function() getmetatable(io.stdin).__gc(1) end))`,
			"false\tstdin:1: bad argument #1 to '__gc' (FILE* expected, got no value)\n" +
				"false\tstdin:2: bad argument #1 to '__gc' (FILE* expected, got number)"},
		{"__gc closes a file but not a standard one", `local name = os.tmpname()
local f = io.open(name, "w")
getmetatable(f).__gc(f)
getmetatable(f).__gc(f)
getmetatable(io.stdout).__gc(io.stdout)
print(io.type(f), io.type(io.stdout))
os.remove(name)`, "closed file\tfile"},
	})
}
