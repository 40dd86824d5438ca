//go:build !unix

package cpu

// Without mmap, large buffers come from the Go heap like small ones.
func mapBytes(n uint64) ([]byte, error) { return alignedBytes(n), nil }

func unmapBytes(b []byte) error { return nil }
