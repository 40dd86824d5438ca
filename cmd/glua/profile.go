package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/gluaproject/glua/runtime"
)

// startProfile is --memory-profile FILE: it creates FILE at once, so that
// a path that cannot be written fails before anything runs, and starts
// recording. The function it returns writes the profile; run calls it
// however the script ended, failure and out-of-memory errors included.
func startProfile(rt *runtime.Runtime, o options, argv []string) (func() error, error) {
	path, ok := o.settings["memory-profile"]
	if !ok {
		return func() error { return nil }, nil
	}
	if path == "" {
		return nil, errors.New("--memory-profile: the file name is empty")
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--memory-profile: cannot open %s: %s", path, strerror(err))
	}
	if err := rt.RecordMemory(true); err != nil {
		f.Close()
		return nil, err
	}
	title := progname
	if o.script > 0 {
		title = argv[o.script]
	}
	return func() error {
		err := rt.WriteProfile(f, title)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--memory-profile: writing %s: %w", path, err)
		}
		return nil
	}, nil
}
