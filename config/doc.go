// Package config reads glua's configuration: the TOML file, its lookup order,
// the GLUA_* environment overrides, and sizes written with units or as
// percentages of device memory.
//
// It owns parsing and validation only. What a setting does is decided by the
// runtime; sizes given as percentages stay strings here because only the
// runtime knows the device they are a percentage of.
package config
