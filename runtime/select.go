package runtime

import (
	"github.com/gluaproject/glua/backend"
	"github.com/gluaproject/glua/config"
)

// openBackend starts the configured backend among those linked into the
// program (see package backend). With "auto" a machine without a usable
// GPU falls back to the CPU, and the returned note says why, for --info.
// It is a variable so that tests can wrap the backend in abilities it
// lacks (export_test.go).
var openBackend = backend.Open

// DeviceCount opens the backend cfg chooses just long enough to ask how
// many devices it has, for a launcher that must not start more ranks
// than there are devices without importing a backend to ask. name is the
// backend chosen ("auto" resolved).
func DeviceCount(cfg config.Config) (name string, count int, err error) {
	// The configured device may be one of several that ranks will use;
	// any device answers how many there are.
	cfg.CUDA.Device = 0
	b, _, err := openBackend(cfg)
	if err != nil {
		return "", 0, err
	}
	count = 1
	if c, ok := b.(DeviceCounter); ok {
		count = c.DeviceCount()
	}
	name = b.Name()
	if err := b.Close(); err != nil {
		return "", 0, err
	}
	return name, count, nil
}
