package runtime_test

import (
	"github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/kernels"
	"github.com/gluaproject/glua/runtime"
)

// The backends implement the runtime's optional interfaces without
// importing it; these checks say so at compile time, and linking the
// packages registers both backends for the tests.
var (
	_ runtime.HostMemory     = (*cpu.Backend)(nil)
	_ runtime.PinnedHost     = (*cpu.Backend)(nil)
	_ runtime.PinnedHost     = (*cuda.Backend)(nil)
	_ runtime.KernelCompiler = (*cuda.Backend)(nil)
	_ runtime.WorkspaceUser  = (*cuda.Backend)(nil)
	_ runtime.KernelCacher   = (*cuda.Backend)(nil)
	_ runtime.AsyncCopier    = (*cuda.Backend)(nil)
	_ runtime.AsyncCopier    = (*cpu.Backend)(nil)
	_ runtime.GraphCapturer  = (*cuda.Backend)(nil)
	_ runtime.LaunchLimiter  = (*cuda.Backend)(nil)
	_ runtime.LaunchLimiter  = (*cpu.Backend)(nil)
	_ runtime.GraphCapturer  = (*cpu.Backend)(nil)
	_ runtime.HostQueue      = (*cpu.Backend)(nil)
	_ kernels.Device         = (*cuda.Backend)(nil)
)
