package lualimit

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
)

// TestCountersAreInstalled fails when gopher-lua's Global loses the
// counter field or its jump table changes, which would leave table growth
// and every loop unchecked.
func TestCountersAreInstalled(t *testing.T) {
	if !counterOK || !countersInstalled() {
		t.Fatal("the counted instructions are not installed: gopher-lua's Global or jump table changed")
	}
}

func newState(t *testing.T, limit uint64) *lua.LState {
	L := lua.NewState()
	t.Cleanup(L.Close)
	lua51.Open(L)
	Install(L, &Memory{Limit: limit, From: "a test's", Setting: "newState"})
	return L
}

func TestAStateWithoutALimitRunsAsBefore(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	lua51.Open(L)
	Install(L, nil)
	if err := L.DoString(`local t = {} for i = 1, 1e5 do t[i] = ("x"):rep(10) end assert(#t == 1e5)`); err != nil {
		t.Fatal(err)
	}
}

// A loop that only grows a table goes through no library function: the
// counted instructions find it.
func TestALoopGrowingATableIsStoppedByTheLookAtTheHeap(t *testing.T) {
	L := newState(t, 32<<20)
	err := L.DoString(`local t = {} while true do t[#t + 1] = {} end`)
	if err == nil || !strings.Contains(err.Error(), "not enough memory: Lua values take") ||
		!strings.Contains(err.Error(), "past the Lua memory limit of 32 MiB (the limit is a test's; set it with newState)") {
		t.Fatalf("err = %v", err)
	}
}

func TestStringRepIsRefusedBeforeItIsBuilt(t *testing.T) {
	L := newState(t, 32<<20)
	err := L.DoString(`local ok, err = pcall(string.rep, "ab", 2^30) assert(not ok) error(err, 0)`)
	want := "not enough memory: 2.0 GiB more would pass the Lua memory limit of 32 MiB"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	// The count is a C int, as Lua 5.1 reads it: 2^32 + 2 is 2.
	if err := L.DoString(`assert(string.rep("ab", 2^32 + 2) == "abab")`); err != nil {
		t.Fatal(err)
	}
}

func TestRepInPiecesGivesTheSameString(t *testing.T) {
	for _, tc := range []struct {
		s string
		n int
	}{{"abc", 3e6}, {"x", repPiece + 7}, {strings.Repeat("q", repPiece+3), 3}} {
		L := newState(t, 0)
		L.SetContext(t.Context())
		L.SetGlobal("s", lua.LString(tc.s))
		L.SetGlobal("n", lua.LNumber(tc.n))
		if err := L.DoString(`r = string.rep(s, n)`); err != nil {
			t.Fatal(err)
		}
		if got := string(L.GetGlobal("r").(lua.LString)); got != strings.Repeat(tc.s, tc.n) {
			t.Errorf("rep of %d bytes %d times: %d bytes, not the repetition", len(tc.s), tc.n, len(got))
		}
	}
}

// The counted JMP moves the frame's Pc itself: loops and branches of
// every kind still go where gopher-lua's would.
func TestCountedJumpsKeepControlFlow(t *testing.T) {
	L := newState(t, 0)
	err := L.DoString(`
		local n, i = 0, 0
		while i < 10000 do
			i = i + 1
			if i % 3 == 0 then n = n + 1 elseif i % 5 == 0 then n = n + 2 else n = n - 1 end
			repeat n = n + 1 if n > 1e9 then break end until true
		end
		for k, v in ipairs({1, 2, 3}) do if v == 2 then n = n + 100 break end end
		local j = 0
		repeat j = j + 1 until j >= 7 or (j > 3 and n < 0)
		result = n * 10 + j`)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := 1; i <= 10000; i++ {
		switch {
		case i%3 == 0:
			want++
		case i%5 == 0:
			want += 2
		default:
			want--
		}
		want++
	}
	want += 100
	if got := L.GetGlobal("result"); got != lua.LNumber(want*10+7) {
		t.Errorf("result = %v, want %d", got, want*10+7)
	}
}
