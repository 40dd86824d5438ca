package cpu

import (
	"testing"

	"github.com/gluaproject/glua/config"
)

func TestOnlyDeviceZeroOpens(t *testing.T) {
	cfg := config.Default()
	cfg.CPU.Memory = "64MiB"
	b, err := open(cfg)
	if err != nil {
		t.Fatalf("device 0: %v", err)
	}
	b.Close()
	cfg.CUDA.Device = 1
	_, err = open(cfg)
	if want := "cpu: device 1: the CPU backend has only device 0 (cuda.device)"; err == nil || err.Error() != want {
		t.Errorf("device 1: %v, want %q", err, want)
	}
}
