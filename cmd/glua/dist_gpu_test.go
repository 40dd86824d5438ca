package main

import (
	"os"
	"testing"

	"github.com/gluaproject/glua/cuda"
)

// These run the dist failure cases of dist_test.go on two GPUs through
// NCCL. They skip without two CUDA devices, unless GLUA_REQUIRE_NCCL=1,
// which makes them fail instead, so that a GPU run cannot pass by
// skipping. Each is timed: the job must end within 10 s of the failure.

func twoGPUs(t *testing.T) {
	t.Helper()
	for dev := range 2 {
		b, err := cuda.Load(cuda.Config{Device: dev})
		if err != nil {
			if os.Getenv("GLUA_REQUIRE_NCCL") == "1" {
				t.Fatalf("GLUA_REQUIRE_NCCL=1 but there is no CUDA device %d: %v", dev, err)
			}
			t.Skipf("needs two CUDA devices: %v", err)
		}
		b.Close()
	}
}

func TestNCCLRanksLuaErrorEndsTheJobWithinSecondsNamingIt(t *testing.T) {
	twoGPUs(t)
	for _, when := range []string{"before", "between", "inside"} {
		t.Run(when, func(t *testing.T) {
			r, took := rankError(t, when, "cuda", nil)
			t.Logf("%s: the job ended %v after it started", when, took)
			checkRankError(t, r, took)
		})
	}
}

func TestNCCLSendAndRecvThatDoNotPairFailBothRanksAtOnce(t *testing.T) {
	twoGPUs(t)
	for _, tc := range pairMismatches {
		t.Run(tc.mode, func(t *testing.T) {
			checkPairMismatch(t, tc.mode, tc.msg, "cuda", nil)
		})
	}
}

func TestNCCLRankThatStopsAnsweringIsNamedAtTheTimeout(t *testing.T) {
	twoGPUs(t)
	checkStoppedRank(t, "cuda", nil)
}

func TestNCCLDistTrainOnTwoGPUsMatchesOneGPU(t *testing.T) {
	twoGPUs(t)
	checkDistTrain(t, "cuda", nil)
}
