package backend

import (
	"errors"
	"strings"
	"testing"

	"github.com/gluaproject/glua/config"
)

// withDrivers runs f with only the given drivers registered.
func withDrivers(t *testing.T, ds ...Driver) {
	t.Helper()
	mu.Lock()
	saved := drivers
	drivers = map[string]Driver{}
	mu.Unlock()
	t.Cleanup(func() { mu.Lock(); drivers = saved; mu.Unlock() })
	for _, d := range ds {
		Register(d)
	}
}

func opener(err error) func(config.Config) (Backend, error) {
	return func(config.Config) (Backend, error) { return nil, err }
}

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), want) {
			t.Fatalf("panic %v, want one containing %q", r, want)
		}
	}()
	f()
}

func TestRegisterTwiceUnderOneNamePanics(t *testing.T) {
	withDrivers(t, Driver{Name: "gpu", Device: "GPU", Open: opener(nil)})
	mustPanic(t, `Register called twice for backend "gpu"`, func() {
		Register(Driver{Name: "gpu", Device: "GPU", Open: opener(nil)})
	})
	mustPanic(t, "without a name", func() { Register(Driver{Name: "x"}) })
	mustPanic(t, "without a name", func() { Register(Driver{Open: opener(nil)}) })
	if got := Names(); len(got) != 1 || got[0] != "gpu" {
		t.Fatalf("Names() = %v after the refused registrations", got)
	}
}

func TestOpenChoosesAmongTheRegistered(t *testing.T) {
	cfg := config.Default()
	withDrivers(t)
	if _, _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "no backend is linked") || !strings.Contains(err.Error(), "glua/cpu") {
		t.Fatalf("no backend linked: %v", err)
	}

	noGPU := errors.New("no driver")
	var opened []string
	track := func(name string, err error) func(config.Config) (Backend, error) {
		return func(config.Config) (Backend, error) { opened = append(opened, name); return nil, err }
	}
	withDrivers(t,
		Driver{Name: "host", Device: "CPU", Open: track("host", nil), Fallback: true},
		Driver{Name: "gpu", Device: "GPU", Open: track("gpu", noGPU)},
	)
	cfg.Backend = "auto"
	_, note, err := Open(cfg)
	if err != nil || strings.Join(opened, ",") != "gpu,host" {
		t.Fatalf("auto opened %v (%v), want the GPU tried first, then the fallback", opened, err)
	}
	if want := "auto: no usable GPU device (no driver); using the CPU backend"; note != want {
		t.Fatalf("note %q, want %q", note, want)
	}

	opened = nil
	cfg.Backend = "gpu"
	if _, _, err := Open(cfg); !errors.Is(err, noGPU) || strings.Join(opened, ",") != "gpu" {
		t.Fatalf("backend by name: opened %v, error %v", opened, err)
	}
	cfg.Backend = "tpu"
	if _, _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), `backend "tpu" is not linked`) || !strings.Contains(err.Error(), "[gpu host]") {
		t.Fatalf("unknown backend: %v", err)
	}
}
