package main

import (
	"errors"
	"fmt"

	"github.com/gluaproject/glua/internal/atomicfile"
	compat "github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/runtime"
)

// startProfile is --memory-profile FILE: it checks at once that FILE can
// be written, so that a bad path fails before anything runs, and starts
// recording. The function it returns writes the profile beside FILE and
// renames it into place when whole (Runtime.DumpProfile), so that a run
// killed before then (--timeout's forced exit, a fatal error) leaves the
// previous profile as it was rather than an empty file; run calls it
// however the script ended, failure and out-of-memory errors included.
func startProfile(rt *runtime.Runtime, o options, argv []string) (func() error, error) {
	path, ok := o.settings["memory-profile"]
	if !ok {
		return func() error { return nil }, nil
	}
	if path == "" {
		return nil, errors.New("--memory-profile: the file name is empty")
	}
	if err := atomicfile.Writable(path); err != nil {
		return nil, fmt.Errorf("--memory-profile: cannot open %s: %s", path, compat.Strerror(err))
	}
	if err := rt.RecordMemory(true); err != nil {
		return nil, err
	}
	title := progname
	if o.script > 0 {
		title = argv[o.script]
	}
	return func() error {
		if err := rt.DumpProfile(path, title); err != nil {
			return fmt.Errorf("--memory-profile: %w", err)
		}
		return nil
	}, nil
}
