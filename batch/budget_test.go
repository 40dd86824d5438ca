package batch

import (
	"testing"

	"github.com/gluaproject/glua/config"
	_ "github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/runtime"
)

// Under a hard limit the default budget is what the limit leaves, less
// room for the pool's rounding and, before the runtime's first product,
// for cuBLAS's workspace: 16384² float32 under 512 MiB, with or without
// a workspace already taken from it, plans 448 MiB (two pieces of B,
// tiles of 4096 rows), not nine tenths of what is left. A small limit
// keeps a tenth.
func TestBudgetUnderAHardLimitLeavesRoomForTheWorkspace(t *testing.T) {
	c := config.Default()
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: "cpu", CPUMemory: "2GiB", HardLimit: "512MiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	plans448 := func(budget uint64) plan {
		t.Helper()
		p, err := planTiles(16384, 16384, 16384, 4, budget, busRatio(runtime.Float32, ""), defaultMultiprocessors)
		if err != nil || p.tm != 4096 || p.tk != 2048 || p.pieces() != 2 {
			t.Errorf("16384² float32 under %d: %s (%v); want tiles of 4096 rows over 2048-deep panels, B in two pieces", budget, p, err)
		}
		return p
	}
	// no workspace yet (the CPU backend takes none): room for one
	budget := freeBudget(rt)
	if want := uint64(512-32-10) << 20; budget != want {
		t.Errorf("budget before any workspace: %d, want %d", budget, want)
	}
	if p := plans448(budget); p.bytes()+workspaceRoom > 512<<20-roundingRoom {
		t.Errorf("%s leaves no room for a workspace of %d under 512 MiB", p, workspaceRoom)
	}
	// 32 MiB in use, as the workspace would be
	used, err := rt.DeviceArray([]int{32 << 20}, runtime.Uint8)
	if err != nil {
		t.Fatal(err)
	}
	defer used.Free()
	budget = freeBudget(rt)
	if want := uint64(480-32-10) << 20; budget != want {
		t.Errorf("budget with 32 MiB used and no workspace: %d, want %d", budget, want)
	}
	// the 32 MiB in use the workspace (on a GPU, after an in-core product)
	budget = underHardLimit(480<<20, true)
	if want := uint64(480-10) << 20; budget != want {
		t.Errorf("budget with the workspace taken: %d, want %d", budget, want)
	}
	plans448(budget)
	if err := rt.SetLimits(runtime.LimitChange{}, runtime.LimitChange{Set: true, Value: "42MiB"}); err != nil {
		t.Fatal(err)
	}
	if got, want := freeBudget(rt), uint64(9<<20); got != want {
		t.Errorf("budget with 10 MiB left: %d, want %d (nine tenths)", got, want)
	}
}
