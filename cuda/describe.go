package cuda

import (
	"fmt"
	"strings"
)

// Library says which shared library was loaded for one part of CUDA.
type Library struct {
	Version string // "12.4", or "unknown"
	Name    string // the name dlopen accepted
	Path    string // the file it mapped, read from /proc/self/maps; "" if unknown
}

// Versions reports the driver, NVRTC and cuBLAS in use.
type Versions struct {
	Driver, NVRTC, CUBLAS Library
}

// Versions reports the versions and locations of the loaded libraries.
func (b *Backend) Versions() Versions {
	v := Versions{
		Driver: Library{Version: "unknown", Name: b.libs[0].name, Path: mappedPath(uintptr(b.drv.cuInit))},
		NVRTC:  Library{Version: "unknown", Name: b.libs[1].name, Path: mappedPath(uintptr(b.nvrtc.nvrtcVersion))},
		CUBLAS: Library{Version: "unknown", Name: b.libs[2].name, Path: mappedPath(uintptr(b.blas.cublasGemmEx))},
	}
	if b.driverVersion > 0 {
		// cuDriverGetVersion encodes 12.4 as 12040.
		v.Driver.Version = fmt.Sprintf("%d.%d", b.driverVersion/1000, b.driverVersion%1000/10)
	}
	if b.nvrtcVersion[0] > 0 {
		v.NVRTC.Version = fmt.Sprintf("%d.%d", b.nvrtcVersion[0], b.nvrtcVersion[1])
	}
	if b.blasVersion[0] > 0 {
		v.CUBLAS.Version = fmt.Sprintf("%d.%d.%d", b.blasVersion[0], b.blasVersion[1], b.blasVersion[2])
	}
	return v
}

// Describe returns lines for `glua --info`, below the device the runtime
// describes from Info: the libraries in use and where they were found,
// the kernel target and the kernel cache.
func (b *Backend) Describe() []string {
	v := b.Versions()
	lines := []string{
		lib("CUDA driver", v.Driver),
		lib("NVRTC", v.NVRTC),
		lib("cuBLAS", v.CUBLAS),
		b.describeNCCL(),
	}
	arch, cubin, err := chooseTarget(b.cc, b.archs, b.nvrtc.nvrtcGetCUBIN != 0)
	switch {
	case err != nil:
		lines = append(lines, "kernel target: "+err.Error())
	case cubin:
		lines = append(lines, "kernel target: "+arch+" (cubin)")
	default:
		lines = append(lines, "kernel target: "+arch+" (PTX, compiled by the driver)")
	}
	st := b.KernelStats()
	if b.cacheDir != "" {
		lines = append(lines, fmt.Sprintf("kernel cache: %s (%d hits, %d compiles)", b.cacheDir, st.CacheHits, st.Compiles))
	} else {
		lines = append(lines, "kernel cache: off ("+b.cacheWhy+")")
	}
	if b.memPool != 0 {
		lines = append(lines, "stream-ordered allocator: available")
	} else {
		lines = append(lines, "stream-ordered allocator: unavailable")
	}
	lines = append(lines, b.describeLt())
	if e := b.sticky.Load(); e != nil {
		lines = append(lines, "state: "+strings.SplitN(e.Error(), "\n", 2)[0])
	}
	return lines
}

// describeNCCL opens NCCL to report it, as a group would; its absence
// only matters to a group of several processes.
func (b *Backend) describeNCCL() string {
	n, err := b.ncclLib()
	if err != nil {
		if strings.Contains(err.Error(), "has no symbol") {
			return "NCCL: " + err.Error()
		}
		return fmt.Sprintf("NCCL: not found (tried %s)", strings.Join(b.cfg.LibNCCL, ", "))
	}
	return lib("NCCL", Library{Version: ncclVersionString(n.version), Name: n.lib.name, Path: mappedPath(uintptr(n.api.ncclGetVersion))})
}

func lib(what string, l Library) string {
	where := l.Name
	if l.Path != "" && l.Path != l.Name {
		where += " → " + l.Path
	}
	return fmt.Sprintf("%s %s (%s)", what, l.Version, where)
}
