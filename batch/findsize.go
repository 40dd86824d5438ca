package batch

import (
	"errors"
	"fmt"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// DefaultStart is where FindSize starts when not told, as Hugging Face
// accelerate's find_executable_batch_size does.
const DefaultStart = 128

// FindSize calls fn(n) for n = start, start/2, start/4, ... down to min,
// and returns the first n for which fn succeeds: the largest that runs.
// Only an out-of-memory error (device or host) moves to the next size;
// any other error ends the search and is returned as it is. Each attempt
// runs in a scope: everything fn allocated is freed when it fails, and
// when it succeeds everything but the arrays it returns in keep.
func FindSize(rt *runtime.Runtime, start, min int, fn func(n int) (keep []*runtime.Array, err error)) (int, error) {
	if start < 1 {
		return 0, fmt.Errorf("start must be at least 1, got %d", start)
	}
	if min < 1 || min > start {
		return 0, fmt.Errorf("min must be from 1 to start (%d), got %d", start, min)
	}
	var tried []int
	for n := start; ; n /= 2 {
		err := rt.Scope(func() ([]*runtime.Array, error) { return fn(n) })
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, device.ErrOutOfMemory) {
			return 0, err
		}
		tried = append(tried, n)
		if n/2 < min {
			return 0, fmt.Errorf("no size from %d down to %d fits (tried %v): %w", start, min, tried, err)
		}
	}
}
