package luac

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/luatest"
)

// runLua51 runs src with the reference interpreter and returns its output.
func runLua51(t *testing.T, src string) string {
	t.Helper()
	return luatest.RunLua51(t, src)
}

func runLuac(t *testing.T, src string) string {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	return runCaptured(t, L, mustLoad(t, L, src))
}

func mustLoad(t *testing.T, L *lua.LState, src string) *lua.LFunction {
	t.Helper()
	fn, err := LoadString(L, src, "=<string>")
	if err != nil {
		t.Fatalf("LoadString: %v", err)
	}
	return fn
}

func TestSnippetsPrintWhatLua51Prints(t *testing.T) {
	runLua51(t, "") // skips the whole test when lua5.1 is absent
	for _, tc := range snippetCases {
		t.Run(tc.name, func(t *testing.T) {
			want := runLua51(t, tc.src)
			if want != tc.want {
				t.Errorf("lua5.1 prints %q but the table expects %q", want, tc.want)
			}
			if got := runLuac(t, tc.src); got != want {
				t.Errorf("printed %q, lua5.1 prints %q", got, want)
			}
		})
	}
}

func TestRandomProgramsPrintWhatLua51Prints(t *testing.T) {
	runLua51(t, "")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))
	// One lua5.1 process runs every program, each in its own do-block.
	programs := make([]randomProgram, 200)
	var all strings.Builder
	for i := range programs {
		programs[i] = newRandomProgram(rng)
		all.WriteString("do\n" + programs[i].src + "end\n")
	}
	lines := strings.Split(runLua51(t, all.String()), "\n")
	if len(lines) != len(programs) {
		t.Fatalf("lua5.1 printed %d lines for %d programs", len(lines), len(programs))
	}
	for i, p := range programs {
		if lines[i] != p.want {
			t.Fatalf("program\n%s\nlua5.1 prints %q, the simulation says %q", p.src, lines[i], p.want)
		}
		if got := runLuac(t, p.src); got != lines[i] {
			t.Fatalf("program\n%s\nprinted %q, lua5.1 prints %q", p.src, got, lines[i])
		}
	}
}
