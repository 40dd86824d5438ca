package bindings_test

import (
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
