package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gluaproject/glua/npy"
)

// scripts/dist_train.lua is the data-parallel loop users copy: trained on
// two ranks, its weights must be identical on every rank (the script
// checks) and equal, within float32's tolerance, to one process's that
// takes every batch of a step itself; rank 0 alone prints the loss, which
// falls.
func TestDistTrainOnTwoRanksMatchesOneProcess(t *testing.T) {
	t.Parallel()
	checkDistTrain(t, "cpu", []string{"--allow-oversubscribe"})
}

func checkDistTrain(t *testing.T, backend string, extra []string) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	const steps = 12
	train := func(nproc int, weights string) result {
		args := []string{"--backend", backend}
		if nproc > 1 {
			args = append(append(args, "--nproc", fmt.Sprint(nproc)), extra...)
		}
		args = append(args, "../../scripts/dist_train.lua", fmt.Sprint(steps), data, weights)
		r := invocation{dir: ".", args: args, env: []string{"GLUA_DIST_TIMEOUT=30s"}}.run(t, gluaBin, "glua")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("--nproc %d: %v", nproc, r)
		}
		return r
	}
	one := train(1, filepath.Join(dir, "one.npy"))
	two := train(2, filepath.Join(dir, "two.npy"))
	if !strings.HasSuffix(two.stdout, fmt.Sprintf("[0] %d steps on 2 ranks: the weights are identical on every rank\n", steps)) {
		t.Errorf("two ranks did not end with the weights identical: %v", two)
	}
	var losses []float64
	for i, line := range strings.Split(strings.TrimSuffix(two.stdout, "\n"), "\n")[:steps] {
		var step int
		var loss float64
		if _, err := fmt.Sscanf(line, "[0] step %d loss %g", &step, &loss); err != nil || step != i+1 {
			t.Fatalf("line %d of two ranks' output is %q, want rank 0's loss of step %d", i+1, line, i+1)
		}
		losses = append(losses, loss)
	}
	if !(losses[steps-1] < losses[0]/100) {
		t.Errorf("the loss went from %g to %g in %d steps", losses[0], losses[steps-1], steps)
	}
	if !strings.Contains(one.stdout, fmt.Sprintf("step 1 loss %g\n", losses[0])) {
		t.Errorf("one process's first loss differs from two ranks' %g:\n%s", losses[0], one.stdout)
	}
	w1, w2 := readFloat32s(t, filepath.Join(dir, "one.npy")), readFloat32s(t, filepath.Join(dir, "two.npy"))
	var diff, norm float64
	for i := range w1 {
		diff += (float64(w1[i]) - float64(w2[i])) * (float64(w1[i]) - float64(w2[i]))
		norm += float64(w1[i]) * float64(w1[i])
	}
	if len(w1) != 16 || len(w2) != 16 || !(math.Sqrt(diff/norm) < 1e-5) {
		t.Errorf("two ranks' weights %v differ from one process's %v", w2, w1)
	}
}

func readFloat32s(t *testing.T, path string) []float32 {
	t.Helper()
	f, err := npy.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 1
	for _, d := range f.Shape {
		n *= d
	}
	b := make([]byte, 4*n)
	if err := f.ReadData(b); err != nil {
		t.Fatal(err)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
