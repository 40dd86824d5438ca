//go:build !linux

package prefault

import "errors"

// ErrUnsupported is Pages' answer where the kernel has no way to ask for
// pages ahead of writing them.
var ErrUnsupported = errors.New("prefault: populating pages ahead is supported on Linux only")

func inner(b []byte) (lo, hi int) { return 0, len(b) }

func adviseHuge([]byte) {}

func populate([]byte) error { return ErrUnsupported }
