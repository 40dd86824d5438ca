package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runMain makes the test binary the example program: the test runs itself
// with it set, so that what runs is main as a process, exit status and
// all, with no Go toolchain needed to build it.
const runMain = "GLUA_EXAMPLE_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestTheEmbeddingExampleRuns(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), runMain+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s%s", err, out, stderr.String())
	}
	want := `the script reports norm of x·x: 117.2
x, scaled in place by the script: [2 4 6 8]
y = x·x, returned by the script: [2 2] [28 40 60 88]
past the quota: out of memory asking for 256 MiB under a hard limit of 64 MiB
within it, the runtime carries on: DeviceArray<float32>[1024x1024] 4.0 MiB
`
	if string(out) != want {
		t.Fatalf("the example printed\n%s\nwant\n%s", out, want)
	}
}
