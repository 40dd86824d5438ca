package cuda

import "github.com/gluaproject/glua/device"

// Launcher compiles source (or finds it compiled: the module is loaded once
// per backend and source, and NVRTC's output is cached on disk) and returns
// a function that launches its kernel entry, as Launch does. It is the
// door package kernels goes through; its result type is a plain func type,
// so that kernels can name it without importing this package.
func (b *Backend) Launcher(source, name string, options []string, entry string) (func(grid, block [3]uint32, shared uint32, s device.Stream, args ...any) error, error) {
	f, err := b.launcherFunction(source, name, options, entry)
	if err != nil {
		return nil, err
	}
	return b.launchOf(f), nil
}

// LauncherWithCarveout is Launcher for a kernel that prefers percent of
// each multiprocessor's unified L1 and shared memory as shared memory
// (PreferSharedCarveout). The preference belongs to the entry, so every
// launcher of it shares it.
func (b *Backend) LauncherWithCarveout(source, name string, options []string, entry string, percent int) (func(grid, block [3]uint32, shared uint32, s device.Stream, args ...any) error, error) {
	f, err := b.launcherFunction(source, name, options, entry)
	if err != nil {
		return nil, err
	}
	if err := b.PreferSharedCarveout(f, percent); err != nil {
		return nil, err
	}
	return b.launchOf(f), nil
}

func (b *Backend) launcherFunction(source, name string, options []string, entry string) (*Function, error) {
	key := cacheKey(source, name, options, "", [2]int{})
	b.mu.Lock()
	m := b.shared[key]
	b.mu.Unlock()
	if m == nil {
		var err error
		if m, err = b.Compile(source, name, options); err != nil {
			return nil, err
		}
		b.mu.Lock()
		if other := b.shared[key]; other != nil { // compiled concurrently
			b.mu.Unlock()
			m.Close()
			m = other
		} else {
			b.shared[key] = m
			b.mu.Unlock()
		}
	}
	return m.Function(entry)
}

func (b *Backend) launchOf(f *Function) func(grid, block [3]uint32, shared uint32, s device.Stream, args ...any) error {
	return func(grid, block [3]uint32, shared uint32, s device.Stream, args ...any) error {
		return b.Launch(f, grid, block, shared, s, args...)
	}
}
