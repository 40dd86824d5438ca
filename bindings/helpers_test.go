package bindings_test

import "github.com/gluaproject/glua/config"

// defaultConfig is the built-in configuration, so tests do not depend on a
// config.toml or GLUA_* variables of the machine running them.
func defaultConfig() *config.Config {
	c := config.Default()
	return &c
}
