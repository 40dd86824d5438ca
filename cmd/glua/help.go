package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gluaproject/glua/config"
)

// writeHelp writes --help: lua5.1's options, glua's, and the environment
// variables, each on one line. It is made from the option tables and
// config.Keys, so that nothing can be left out of it.
func writeHelp(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, usageLine)
	fmt.Fprintln(tw, "Options, as lua5.1's:")
	for _, opt := range luaOptions {
		fmt.Fprintf(tw, "  %s\t%s\n", opt[0], opt[1])
	}
	fmt.Fprintln(tw, "glua's options (the value after a space or =):")
	for _, opt := range longOptions {
		fmt.Fprintf(tw, "  %s\t%s\n", optionSyntax(opt), opt.help)
	}
	fmt.Fprintln(tw, "Environment variables (a flag wins over its variable; -E ignores them):")
	fmt.Fprintf(tw, "  %s\t%s\n", "GLUA_CONFIG", "the configuration file, when there is no --config")
	for _, k := range config.Keys {
		fmt.Fprintf(tw, "  %s\t%s\n", k.Env, keyHelp(k.Name))
	}
	fmt.Fprintf(tw, "  %s\t%s\n", "LUA_PATH", "where require looks for Lua modules")
	fmt.Fprintln(tw, "config.toml documents every key; glua --info shows the values in effect.")
	return tw.Flush()
}

func optionSyntax(opt longOption) string {
	s := "--" + opt.name
	if opt.arg != "" {
		s += " " + opt.arg
	}
	return s
}

// keyNotes are what a variable's line says beyond its key, where a user
// needs more than the name to use it.
var keyNotes = map[string]string{
	"dist.timeout": "how long a rank waits for another before failing (default 1m); " +
		"lengthen it for a long first step: GLUA_DIST_TIMEOUT=10m",
}

// keyHelp says which key a variable sets and the flag that also does.
func keyHelp(key string) string {
	s := key
	for _, opt := range longOptions {
		if opt.key == key {
			s += ", as --" + opt.name
		}
	}
	if note, ok := keyNotes[key]; ok {
		s += ": " + note
	}
	return s
}

// writeUsage follows a bad command line: the usage line, as lua prints
// it, and where the options are explained.
func writeUsage(w io.Writer) {
	fmt.Fprintf(w, "%s\nTry 'glua --help' for the options and environment variables.\n", usageLine)
}
