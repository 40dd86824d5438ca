package runtime

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/gluaproject/glua/backend"
	"github.com/gluaproject/glua/config"
)

// describer is implemented by backends that can say more about themselves
// for --info: driver and library versions, where each library was found.
type describer interface {
	Describe() []string
}

// An InfoLine is one line a package above the runtime adds to WriteInfo
// (the command line's rank environment, read by dist), so that the
// runtime shows it without importing the package.
type InfoLine struct {
	Label string        // what the line is about: "rank environment"
	Text  func() string // its text, read each time WriteInfo runs
}

var (
	infoMu    sync.Mutex
	infoLines []InfoLine
)

// RegisterInfo adds a line that WriteInfo shows after the pool's, as
// "label: text". Registering a second line under a label, or one without
// a label or text, panics, as RegisterModule does.
func RegisterInfo(l InfoLine) {
	infoMu.Lock()
	defer infoMu.Unlock()
	if l.Label == "" || l.Text == nil {
		panic("runtime: RegisterInfo of a line without a label or a Text function")
	}
	for _, old := range infoLines {
		if old.Label == l.Label {
			panic(fmt.Sprintf("runtime: RegisterInfo called twice for %q", l.Label))
		}
	}
	infoLines = append(infoLines, l)
}

// WriteInfo writes what `glua --info` shows: the backend and why it was
// chosen, the device, the libraries, the pool, the lines registered with
// RegisterInfo and the configuration in effect.
func (rt *Runtime) WriteInfo(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "backend: %s (%s)\n", rt.backend.Name(), rt.backendNote)
	fmt.Fprintf(&b, "linked: backends %s; Lua modules %s\n", strings.Join(backend.Names(), ", "), strings.Join(Modules(), ", "))
	info, err := rt.backend.Info()
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "device %d: %s\n", info.Index, info.Name)
	if info.ComputeCapability != [2]int{} {
		fmt.Fprintf(&b, "  compute capability: %d.%d\n", info.ComputeCapability[0], info.ComputeCapability[1])
		fmt.Fprintf(&b, "  multiprocessors: %d\n", info.Multiprocessors)
	} else {
		fmt.Fprintf(&b, "  threads: %d\n", info.Multiprocessors)
	}
	fmt.Fprintf(&b, "  memory: %s free of %s\n", config.FormatSize(info.FreeMemory), config.FormatSize(info.TotalMemory))
	if d, ok := rt.backend.(describer); ok {
		for _, line := range d.Describe() {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	soft, hard := rt.pool.Limits()
	if rt.shared != nil {
		ssoft, shard := rt.shared.pool.Limits()
		fmt.Fprintf(&b, "pool: strategy %s, shared by %s: soft limit %s, hard limit %s; this runtime's quota: soft %s, hard %s\n",
			rt.pool.Strategy(), plural(rt.shared.Runtimes(), "runtime", "runtimes"), limitString(ssoft), limitString(shard), limitString(soft), limitString(hard))
	} else {
		fmt.Fprintf(&b, "pool: strategy %s, soft limit %s, hard limit %s\n", rt.pool.Strategy(), limitString(soft), limitString(hard))
	}
	infoMu.Lock()
	lines := append([]InfoLine(nil), infoLines...)
	infoMu.Unlock()
	for _, l := range lines {
		fmt.Fprintf(&b, "%s: %s\n", l.Label, l.Text())
	}
	src := rt.cfg.Source
	if src == "" {
		src = "built-in defaults"
	}
	fmt.Fprintf(&b, "configuration (from %s, with environment and flags applied):\n", src)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return rt.cfg.WriteSettings(w)
}
