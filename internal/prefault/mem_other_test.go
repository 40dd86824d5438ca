//go:build !linux

package prefault

import "errors"

func mapAnon(n int) ([]byte, func(), error) { return make([]byte, n), func() {}, nil }

func resident([]byte) (int, error) { return 0, errors.New("mincore is read on Linux only") }
