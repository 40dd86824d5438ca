package bindings_test

// Link the backends the conformance scripts run on.
import (
	_ "github.com/gluaproject/glua/cpu"
	_ "github.com/gluaproject/glua/cuda"
)
