package bindings_test

import (
	"strings"
	"testing"

	"github.com/gluaproject/glua/runtime"
)

// A script may require batch before, or without, cuda: its loops still
// hand out DeviceArrays.
func TestBatchRequiredAloneHandsOutArrays(t *testing.T) {
	rt, err := runtime.New(runtime.Options{Backend: "cpu", Config: defaultConfig(), CPUMemory: "64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	err = rt.DoString(`local batch = require("batch")
		for i, x in batch.iter({ { { 1, 2 } } }) do assert(tostring(x):find("DeviceArray<float32>%[2%]"), tostring(x)) end`)
	if err != nil {
		t.Fatal(err)
	}
}

// Sharding reads this process's rank from the launch environment: a broken
// one is an error naming the call and the variable, before any batch is
// uploaded, and the runtime carries on.
func TestShardWithABrokenLaunchEnvironmentIsAnError(t *testing.T) {
	t.Setenv("GLUA_RANK", "5")
	t.Setenv("GLUA_WORLD_SIZE", "2")
	t.Setenv("GLUA_LOCAL_RANK", "0")
	rt, err := runtime.New(runtime.Options{Backend: "cpu", Config: defaultConfig(), CPUMemory: "64MiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for _, src := range []string{
		`require("batch").iter({ { { 1 } } }, { shard = true })`,
		`require("batch").chunks(require("cuda").host_array({4, 2}), 2, { shard = true })`,
	} {
		err := rt.DoString(src)
		if err == nil || !strings.Contains(err.Error(), ": shard: ") || !strings.Contains(err.Error(), "GLUA_RANK") {
			t.Errorf("%s: %v, want an error naming shard and GLUA_RANK", src, err)
		}
	}
	if err := rt.DoString(`assert(#require("batch").chunks(require("cuda").host_array({4, 2}), 2) == 2)`); err != nil {
		t.Fatalf("after the errors: %v", err)
	}
}
