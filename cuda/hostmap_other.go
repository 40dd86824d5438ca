//go:build !linux

package cuda

import "errors"

// mapHost is Linux only: elsewhere AllocHost uses cuMemHostAlloc.
func mapHost(uint64) ([]byte, error) {
	return nil, errors.New("mapping host memory to page-lock is supported on Linux only")
}

func unmapHost([]byte) error { return nil }
