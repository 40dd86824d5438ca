// Command glua runs Lua scripts that drive the GPU through glua's modules
// (cuda, kernels, pool, batch). It is used as the reference lua interpreter
// is: glua [options] [script [args]]. Run glua -x for the options.
package main

import (
	"os"

	// Registers the Lua modules with the runtime.
	_ "github.com/gluaproject/glua/bindings"
)

// version is glua's release, printed by -v.
const version = "0.1.0"

func main() {
	os.Exit(run(os.Args))
}
