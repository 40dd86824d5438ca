//go:build !linux

package prefault

import "errors"

// ErrRefused is Pages' answer where the kernel would not populate the
// pages: here, always.
var ErrRefused = errors.New("prefault: populating pages ahead is supported on Linux only")

func inner(b []byte) (lo, hi int) { return 0, len(b) }

func adviseHuge([]byte) {}

func populate([]byte) error { return ErrRefused }
