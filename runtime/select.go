package runtime

import (
	"github.com/gluaproject/glua/backend"
	"github.com/gluaproject/glua/config"
)

// openBackend starts the configured backend among those linked into the
// program (see package backend). With "auto" a machine without a usable
// GPU falls back to the CPU, and the returned note says why, for --info.
func openBackend(cfg config.Config) (Backend, string, error) { return backend.Open(cfg) }
