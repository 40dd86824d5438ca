// Command glua runs Lua scripts that drive the GPU through glua's modules
// (cuda, kernels, pool, batch). It is used as the reference lua
// interpreter is, glua [options] [script [args]], with options of its own
// for the backend, the memory pool and the configuration (longOptions in
// args.go, glua --help), and an interactive mode (repl.go).
package main

import (
	"os"

	// Register the Lua modules, and the backends the runtime chooses from.
	_ "github.com/gluaproject/glua/bindings"
	_ "github.com/gluaproject/glua/cpu"
	_ "github.com/gluaproject/glua/cuda"
)

// version is glua's release, printed by -v.
const version = "0.1.0"

func main() {
	os.Exit(run(os.Args))
}
