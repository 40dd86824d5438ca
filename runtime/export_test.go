package runtime

import "github.com/gluaproject/glua/config"

// WrapBackend makes New wrap every backend it opens with wrap, until
// restore is called: tests give the CPU backend abilities it lacks.
func WrapBackend(wrap func(Backend) Backend) (restore func()) {
	old := openBackend
	openBackend = func(cfg config.Config) (Backend, string, error) {
		b, note, err := old(cfg)
		if err != nil {
			return nil, note, err
		}
		return wrap(b), note, nil
	}
	return func() { openBackend = old }
}

// StageThreads and StageLayout expose how many threads a copy through a
// Stager takes.
var StageThreads, StageLayout = stageThreads, layout

// ChecksBounds says whether the kernel's translations check every index
// on the GPU (check_bounds).
func (k *JITKernel) ChecksBounds() bool { return k.opts.CheckBounds }

// DownloadBytes is how many bytes of mapped memory the new arrays of
// downloads hold, and how many the cache of dropped ones keeps.
func (rt *Runtime) DownloadBytes() (live, cached int64) {
	return rt.xfer.downloads.live.Load(), rt.xfer.downloads.cachedBytes()
}

// DownloadCounts is what the memory of download arrays did so far: memory
// mapped anew, collections started ahead of need, and those a request
// waited for whole.
func (rt *Runtime) DownloadCounts() (maps, ahead, waited int64) {
	return rt.xfer.downloads.counts()
}

// SetDownloadPaceMin sets the fewest bytes of download arrays mapped
// between two collections, until restore is called.
func SetDownloadPaceMin(n int64) (restore func()) {
	old := downloadPaceMin
	downloadPaceMin = n
	return func() { downloadPaceMin = old }
}

// SetCollectFirstMin sets the smallest result array that collects before
// it maps fresh memory, until restore is called.
func SetCollectFirstMin(n int64) (restore func()) {
	old := collectFirstMin
	collectFirstMin = n
	return func() { collectFirstMin = old }
}

// FunctionTree is the syntax tree of the function src returns, as
// kernels.jit and kernels.map_reduce receive it.
var FunctionTree = functionTree

// MapResidency is the dynamic shared memory and the carveout with which
// kernels.map's vector entries that read inputs arrays launch.
func (rt *Runtime) MapResidency(inputs int) (shared uint32, carveout int) {
	return rt.kernels.maps.residency(rt.backend, inputs)
}
