package batch

import (
	"testing"

	"github.com/gluaproject/glua/config"
	_ "github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/runtime"
)

// Under a hard limit the default budget is what the limit leaves, less
// room for cuBLAS's workspace: 16384² float32 under 512 MiB with the
// workspace's 32 MiB taken plans 448 MiB (two pieces of B, tiles of 4096
// rows), not nine tenths of what is left. A small limit keeps a tenth.
func TestBudgetUnderAHardLimitLeavesRoomForTheWorkspace(t *testing.T) {
	c := config.Default()
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: "cpu", CPUMemory: "2GiB", HardLimit: "512MiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if got, want := freeBudget(rt), uint64(480<<20); got != want {
		t.Errorf("budget with nothing used: %d, want %d", got, want)
	}
	workspace, err := rt.DeviceArray([]int{32 << 20}, runtime.Uint8)
	if err != nil {
		t.Fatal(err)
	}
	defer workspace.Free()
	budget := freeBudget(rt)
	if want := uint64(448 << 20); budget != want {
		t.Errorf("budget with 32 MiB used: %d, want %d", budget, want)
	}
	p, err := planTiles(16384, 16384, 16384, 4, budget, busRatio(runtime.Float32, ""), defaultMultiprocessors)
	if err != nil || p.tm != 4096 || p.tk != 2048 || p.pieces() != 2 {
		t.Errorf("16384² float32 under %d: %s (%v); want tiles of 4096 rows over 2048-deep panels, B in two pieces", budget, p, err)
	}
	if err := rt.SetLimits(runtime.LimitChange{}, runtime.LimitChange{Set: true, Value: "42MiB"}); err != nil {
		t.Fatal(err)
	}
	if got, want := freeBudget(rt), uint64(9<<20); got != want {
		t.Errorf("budget with 10 MiB left: %d, want %d (nine tenths)", got, want)
	}
}
