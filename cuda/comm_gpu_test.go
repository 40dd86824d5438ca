package cuda_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/freeport"
)

// The two-GPU tests re-run this test binary as ranks 0 and 1
// (GLUA_NCCL_TEST_RANK), each on its own device, meeting at a free local
// port through NCCL_COMM_ID as glua --nproc does.

const ncclSeed = 7

func requireNCCL() bool { return os.Getenv("GLUA_REQUIRE_NCCL") == "1" }

func runRanks(t *testing.T, test string, extra ...string) []string {
	cudatest.Shared(t) // skips without CUDA unless GLUA_REQUIRE_CUDA=1
	if second, err := cuda.Load(cuda.Config{Device: 1}); err != nil {
		if requireNCCL() {
			t.Fatalf("GLUA_REQUIRE_NCCL=1 but no second device: %v", err)
		}
		t.Skipf("needs two CUDA devices: %v", err)
	} else {
		second.Close()
	}
	addr, err := freeport.Local()
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]string, 2)
	errs := make(chan error, 2)
	for r := 0; r < 2; r++ {
		cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
		cmd.Env = append(os.Environ(), "GLUA_NCCL_TEST_RANK="+strconv.Itoa(r), "NCCL_COMM_ID="+addr, "GLUA_DEVICE="+strconv.Itoa(r))
		cmd.Env = append(cmd.Env, extra...)
		go func(r int) {
			out, err := cmd.CombinedOutput()
			outs[r] = string(out)
			errs <- err
		}(r)
	}
	var failed bool
	for range 2 {
		if err := <-errs; err != nil {
			failed = true
		}
	}
	for r, out := range outs {
		if strings.Contains(out, "NCCL-MISSING") {
			if requireNCCL() {
				t.Fatalf("GLUA_REQUIRE_NCCL=1 but rank %d found no NCCL:\n%s", r, out)
			}
			t.Skipf("no NCCL:\n%s", out)
		}
	}
	if failed && !strings.Contains(test, "Early") {
		t.Fatalf("a rank failed:\n--- rank 0\n%s\n--- rank 1\n%s", outs[0], outs[1])
	}
	return outs
}

// openRank is the child's half: its backend and its communicator.
func openRank(t *testing.T, timeout time.Duration) (*cuda.Backend, device.Comm, int) {
	rank, _ := strconv.Atoi(os.Getenv("GLUA_NCCL_TEST_RANK"))
	b, err := cuda.Load(cuda.Config{Device: rank})
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.OpenComm(context.Background(), device.CommConfig{Rank: rank, Size: 2, Addr: os.Getenv("NCCL_COMM_ID"), Timeout: timeout})
	if err != nil {
		if strings.Contains(err.Error(), "needs NCCL") {
			fmt.Println("NCCL-MISSING:", err)
			t.SkipNow()
		}
		t.Fatal(err)
	}
	return b, c, rank
}

// input is rank r's data: small integers, so that every reduction is
// exact in float32 and int32 alike.
func input(r, n int) []float64 {
	rng := rand.New(rand.NewSource(ncclSeed + int64(r)))
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(rng.Intn(7) + 1)
	}
	return v
}

func encode(dt device.DType, v []float64) []byte {
	b := make([]byte, len(v)*dt.Size())
	for i, x := range v {
		if dt == device.Float32 {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
		} else {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(x)))
		}
	}
	return b
}

func decode(dt device.DType, b []byte) []float64 {
	v := make([]float64, len(b)/dt.Size())
	for i := range v {
		u := binary.LittleEndian.Uint32(b[4*i:])
		if dt == device.Float32 {
			v[i] = float64(math.Float32frombits(u))
		} else {
			v[i] = float64(int32(u))
		}
	}
	return v
}

func reduce(op device.ReduceOp, dt device.DType, a, b float64) float64 {
	switch op {
	case device.ReduceSum:
		return a + b
	case device.ReduceProd:
		return a * b
	case device.ReduceMax:
		return math.Max(a, b)
	case device.ReduceMin:
		return math.Min(a, b)
	}
	if dt == device.Int32 {
		return math.Trunc((a + b) / 2)
	}
	return (a + b) / 2
}

func TestNCCLCollectivesMatchAReferenceOnTwoGPUs(t *testing.T) {
	if os.Getenv("GLUA_NCCL_TEST_RANK") == "" {
		runRanks(t, t.Name())
		return
	}
	b, c, rank := openRank(t, time.Minute)
	defer b.Close()
	defer c.Close()
	const n = 1000
	s := device.Stream(0)
	mine, theirs := input(rank, 2*n), input(1-rank, 2*n)
	buf, _ := b.Alloc(2 * n * 4)
	out, _ := b.Alloc(2 * n * 4)
	check := func(what string, dt device.DType, p device.Ptr, want []float64) {
		t.Helper()
		if err := b.StreamSynchronize(s); err != nil {
			t.Fatalf("%s %s: %v", what, dt, err)
		}
		got := make([]byte, len(want)*4)
		if err := b.Download(got, p, s); err != nil {
			t.Fatal(err)
		}
		for i, g := range decode(dt, got) {
			if g != want[i] {
				t.Fatalf("%s %s: element %d is %v, want %v", what, dt, i, g, want[i])
			}
		}
	}
	for _, dt := range []device.DType{device.Float32, device.Int32} {
		for _, op := range []device.ReduceOp{device.ReduceSum, device.ReduceProd, device.ReduceMax, device.ReduceMin, device.ReduceAvg} {
			want := make([]float64, n)
			for i := range want {
				want[i] = reduce(op, dt, mine[i], theirs[i])
			}
			_ = b.Upload(buf, encode(dt, mine[:n]), s)
			if err := c.AllReduce(buf, n, dt, op, s); err != nil {
				t.Fatal(err)
			}
			check("all_reduce "+op.String(), dt, buf, want)
			_ = b.Upload(buf, encode(dt, mine[:n]), s)
			if err := c.Reduce(buf, n, dt, op, 1, s); err != nil {
				t.Fatal(err)
			}
			if rank == 1 {
				check("reduce "+op.String(), dt, buf, want)
			} else {
				check("reduce "+op.String()+" (not root)", dt, buf, mine[:n])
			}
			// reduce_scatter: rank r gets slice r of the reduction.
			_ = b.Upload(buf, encode(dt, mine), s)
			if err := c.ReduceScatter(out, buf, n, dt, op, s); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				want[i] = reduce(op, dt, mine[rank*n+i], theirs[rank*n+i])
			}
			check("reduce_scatter "+op.String(), dt, out, want)
		}
		_ = b.Upload(buf, encode(dt, mine[:n]), s)
		if err := c.Broadcast(buf, n, dt, 0, s); err != nil {
			t.Fatal(err)
		}
		check("broadcast", dt, buf, input(0, 2*n)[:n])
		_ = b.Upload(buf, encode(dt, mine[:n]), s)
		if err := c.AllGather(out, buf, n, dt, s); err != nil {
			t.Fatal(err)
		}
		check("all_gather", dt, out, append(input(0, 2*n)[:n:n], input(1, 2*n)[:n]...))
		_ = b.Upload(buf, encode(dt, mine[:n]), s)
		if rank == 0 {
			err := c.Send(buf, n, dt, 1, s)
			if err != nil {
				t.Fatal(err)
			}
			check("send", dt, buf, mine[:n])
		} else {
			if err := c.Recv(buf, n, dt, 0, s); err != nil {
				t.Fatal(err)
			}
			check("recv", dt, buf, theirs[:n])
		}
	}
	if err := c.Barrier(s); err != nil {
		t.Fatal(err)
	}
}

// A rank that exits without a word fails the other's collective within
// seconds, naming it, and not at the timeout (a minute here): the check
// of calls sees its connection end without a goodbye.
func TestNCCLRankThatExitsEarlyFailsTheOtherWithinSeconds(t *testing.T) {
	if os.Getenv("GLUA_NCCL_TEST_RANK") == "" {
		outs := runRanks(t, t.Name())
		if !strings.Contains(outs[0], "FAULT-SEEN") {
			t.Fatalf("rank 0 did not see rank 1 go:\n%s", outs[0])
		}
		return
	}
	b, c, rank := openRank(t, time.Minute)
	if rank == 1 {
		os.Exit(0) // without a word to rank 0
	}
	defer b.Close()
	buf, _ := b.Alloc(4 << 20)
	start := time.Now()
	err := c.AllReduce(buf, 1<<20, device.Float32, device.ReduceSum, 0)
	if err == nil {
		err = b.StreamSynchronize(0)
	}
	if err == nil {
		t.Fatal("an all_reduce with a rank gone succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("failing took %v", d)
	}
	if ce, ok := err.(*device.CommError); !ok || ce.Rank != 1 || !strings.Contains(err.Error(), "rank 1 left the group") {
		t.Fatalf("got %T %v, want a *device.CommError naming rank 1, which left the group", err, err)
	}
	fmt.Println("FAULT-SEEN:", err)
}

// Ranks whose all_reduce differs in size fail, each naming the difference,
// at once and not at the timeout: NCCL itself would hang or reduce
// buffers of different sizes. The barrier after it reports the failure at
// the latest.
func TestNCCLMismatchedCallsFailBothRanksAtOnce(t *testing.T) {
	if os.Getenv("GLUA_NCCL_TEST_RANK") == "" {
		outs := runRanks(t, t.Name())
		for r, out := range outs {
			if !strings.Contains(out, "MISMATCH-SEEN") {
				t.Errorf("rank %d did not report the mismatch:\n%s", r, out)
			}
		}
		return
	}
	b, c, rank := openRank(t, time.Minute)
	defer b.Close()
	buf, _ := b.Alloc(4096)
	start := time.Now()
	err := c.AllReduce(buf, 1000+rank, device.Float32, device.ReduceSum, 0)
	if err == nil {
		err = c.Barrier(0)
	}
	want := "the ranks stopped at an earlier all_reduce: rank 1 has 1001 float32 elements, rank 0 has 1000"
	var ce *device.CommError
	if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &ce) || ce.Rank != 1 {
		t.Fatalf("got %v, want a CommError from rank 1 saying %q", err, want)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("failing took %v", d)
	}
	c.Close()
	fmt.Println("MISMATCH-SEEN:", err)
}

// Without NCCL one GPU does all it did: Load never opens NCCL, and only a
// group of several processes fails, naming the library.
func TestOneGPUWorksWithoutNCCL(t *testing.T) {
	missing := "/nonexistent/libglua-missing-nccl.so"
	b := cudatest.Load(t, cuda.Config{LibNCCL: []string{missing}})
	p, err := b.Alloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(p, 4096)
	src := []byte(strings.Repeat("nccl", 1024))
	got := make([]byte, len(src))
	if err := b.Upload(p, src, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Download(got, p, 0); err != nil || string(got) != string(src) {
		t.Fatalf("round trip without NCCL: %v", err)
	}
	t.Setenv("NCCL_COMM_ID", "")
	_, err = b.OpenComm(context.Background(), device.CommConfig{Rank: 1, Size: 2, Addr: "127.0.0.1:1", Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "needs NCCL") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("OpenComm without NCCL = %v, want an error naming %s", err, missing)
	}
}

// A group of one process on one GPU goes through NCCL as a larger group
// does (the id from NCCL's bootstrap at NCCL_COMM_ID, ncclCommInitRank
// with the id by value, every collective on the stream): each collective
// must leave a rank's data as a group of one defines it, for float32 and
// int32 and every op. It needs only one device, so it runs where two are
// not to be had.
func TestNCCLGroupOfOneOnOneGPU(t *testing.T) {
	b := cudatest.Shared(t)
	addr, err := freeport.Local()
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.OpenComm(context.Background(), device.CommConfig{Rank: 0, Size: 1, Addr: addr, Timeout: time.Minute})
	if err != nil {
		if strings.Contains(err.Error(), "needs NCCL") && !requireNCCL() {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	const n = 1000
	s := cudatest.Stream(t, b)
	for _, dt := range []device.DType{device.Float32, device.Int32} {
		want := input(0, n)
		bytes := uint64(n * dt.Size())
		buf, err := b.Alloc(bytes)
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.Alloc(bytes)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, p device.Ptr) {
			t.Helper()
			if err := b.StreamSynchronize(s); err != nil {
				t.Fatalf("%s %s: %v", dt, what, err)
			}
			got := make([]byte, bytes)
			if err := b.Download(got, p, 0); err != nil {
				t.Fatal(err)
			}
			for i, v := range decode(dt, got) {
				if v != want[i] {
					t.Fatalf("%s %s: element %d is %v, want %v", dt, what, i, v, want[i])
				}
			}
		}
		if err := b.Upload(buf, encode(dt, want), 0); err != nil {
			t.Fatal(err)
		}
		for _, op := range []device.ReduceOp{device.ReduceSum, device.ReduceProd, device.ReduceMax, device.ReduceMin, device.ReduceAvg} {
			if err := c.AllReduce(buf, n, dt, op, s); err != nil {
				t.Fatalf("%s all_reduce %v: %v", dt, op, err)
			}
			check(fmt.Sprintf("all_reduce %v", op), buf)
			if err := c.Reduce(buf, n, dt, op, 0, s); err != nil {
				t.Fatalf("%s reduce %v: %v", dt, op, err)
			}
			check(fmt.Sprintf("reduce %v", op), buf)
		}
		if err := c.Broadcast(buf, n, dt, 0, s); err != nil {
			t.Fatal(err)
		}
		check("broadcast", buf)
		if err := c.AllGather(out, buf, n, dt, s); err != nil {
			t.Fatal(err)
		}
		check("all_gather", out)
		if err := b.Memset(out, 0, bytes, s); err != nil {
			t.Fatal(err)
		}
		if err := c.ReduceScatter(out, buf, n, dt, device.ReduceSum, s); err != nil {
			t.Fatal(err)
		}
		check("reduce_scatter", out)
		if err := c.Barrier(s); err != nil {
			t.Fatal(err)
		}
		b.Free(buf, bytes)
		b.Free(out, bytes)
	}
}
