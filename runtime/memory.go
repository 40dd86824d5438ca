package runtime

import (
	"fmt"
	"strings"

	"github.com/gluaproject/glua/config"
)

// Limits are the pool's limits in bytes; 0 means none. On a Shared pool
// they are this runtime's quota (Shared.Pool().Limits() are the pool's).
func (rt *Runtime) Limits() (soft, hard uint64) { return rt.pool.Limits() }

// LimitChange is one limit to change in SetLimits.
type LimitChange struct {
	Set   bool   // change this limit
	Value string // size or percentage; "" clears the limit
}

// SetLimits changes the pool's soft and/or hard limit. Sizes are bytes,
// unit strings or percentages of device memory. On a Shared pool it
// changes this runtime's quota only. These are the host's limits: in a
// sandboxed runtime they are also the ceiling of ScriptSetLimits.
func (rt *Runtime) SetLimits(soft, hard LimitChange) error {
	return rt.setLimits(soft, hard, false)
}

// ScriptSetLimits is SetLimits as a script asks it (pool.set_limit): in a
// sandboxed runtime the limits the host set are a ceiling, which the
// script may lower its limits under and raise them back to, never past;
// the error names the ceiling and where it came from.
func (rt *Runtime) ScriptSetLimits(soft, hard LimitChange) error {
	return rt.setLimits(soft, hard, rt.script.sandbox)
}

func (rt *Runtime) setLimits(soft, hard LimitChange, capped bool) error {
	if err := rt.usable(); err != nil {
		return err
	}
	curSoft, curHard := rt.pool.Limits()
	_, total, err := rt.backend.MemInfo()
	if err != nil {
		return err
	}
	parse := func(c LimitChange, cur uint64, name string) (uint64, error) {
		if !c.Set {
			return cur, nil
		}
		return parseLimit(name, c.Value, total)
	}
	if curSoft, err = parse(soft, curSoft, "soft"); err != nil {
		return err
	}
	if curHard, err = parse(hard, curHard, "hard"); err != nil {
		return err
	}
	if capped {
		if err := rt.script.ceiling.allows(curSoft, curHard); err != nil {
			return err
		}
	}
	err = rt.pool.SetLimits(curSoft, curHard)
	if err == nil && rt.script.sandbox && !capped {
		rt.script.ceiling = ceiling{soft: curSoft, hard: curHard, softFrom: "Runtime.SetLimits", hardFrom: "Runtime.SetLimits"}
	}
	if rec := rt.recording.active(); rec != nil {
		// A refused hard limit may still have released the cache.
		if err == nil {
			rt.recordLimits(rec)
		} else {
			rt.recordReserved(rec)
		}
	}
	return err
}

// Reclaim releases cached memory to the device: at least nbytes if that
// much is cached, everything cached when nbytes is 0. It returns the bytes
// released. On a Shared pool the cache is the shared one; no runtime's
// live arrays are touched.
func (rt *Runtime) Reclaim(nbytes uint64) (uint64, error) {
	if err := rt.usable(); err != nil {
		return 0, err
	}
	rt.drain()
	n, err := rt.pool.Reclaim(nbytes)
	if rec := rt.recording.active(); rec != nil {
		rt.recordReserved(rec)
	}
	return n, err
}

// Status is the human summary of memory use that pool.status() prints. On
// a Shared pool it shows this runtime's arrays and quota, then the shared
// pool's figures (every runtime's arrays, reserved and cached memory) and
// limits, so that no line mixes one runtime's use with the others'.
func (rt *Runtime) Status() string {
	s := rt.Stats()
	var b strings.Builder
	total := s.DeviceTotal
	usedDevice := total - min(s.DeviceFree, total)
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(usedDevice) / float64(total)
	}
	fmt.Fprintf(&b, "Effective %s memory usage: %.2f%% (%s/%s)\n", rt.memoryWord(), pct, config.FormatSize(usedDevice), config.FormatSize(total))
	graphs, graphHeld, orphaned := rt.GraphMemory()
	if rt.shared != nil {
		root := rt.shared.pool.Stats()
		fmt.Fprintf(&b, "Memory pool usage: %s in %s (this runtime's, in a pool shared by %s)\n",
			config.FormatSize(s.Used), plural(s.LiveBlocks, "array", "arrays"), plural(rt.shared.Runtimes(), "runtime", "runtimes"))
		fmt.Fprintf(&b, "Shared pool: %s in use, %s reserved, %s cached\n",
			config.FormatSize(root.Used), config.FormatSize(root.Reserved), config.FormatSize(root.Reserved-min(root.Used, root.Reserved)))
		fmt.Fprintf(&b, "Limits: soft %s, hard %s (this runtime's quota); shared pool soft %s, hard %s; strategy %s\n",
			limitString(s.SoftLimit), limitString(s.HardLimit), limitString(root.SoftLimit), limitString(root.HardLimit), rt.pool.Strategy())
	} else {
		held := plural(s.LiveBlocks, "array", "arrays")
		if n, bytes := rt.ownBlocks(); n == 1 {
			held += fmt.Sprintf(" and a %s cuBLAS workspace", config.FormatSize(bytes))
		} else if n > 1 {
			held += fmt.Sprintf(" and %d cuBLAS workspaces (%s)", n, config.FormatSize(bytes))
		}
		if orphaned > 0 {
			held += fmt.Sprintf(" and %s kept by graphs", config.FormatSize(orphaned))
		}
		fmt.Fprintf(&b, "Memory pool usage: %s in %s (%s reserved, %s cached)\n",
			config.FormatSize(s.Used), held, config.FormatSize(s.Reserved), config.FormatSize(s.Reserved-min(s.Used, s.Reserved)))
		fmt.Fprintf(&b, "Limits: soft %s, hard %s; strategy %s\n", limitString(s.SoftLimit), limitString(s.HardLimit), rt.pool.Strategy())
	}
	writeGraphStatus(&b, graphs, graphHeld, orphaned)
	if n := rt.CommBytes(); n > 0 {
		fmt.Fprintf(&b, "Outside the pool: %s of NCCL's for the group of processes (in the effective usage above; not in the pool's usage or its limits)\n", config.FormatSize(n))
	}
	rt.writePinnedStatus(&b)
	rt.writeDownloadStatus(&b)
	return b.String()
}

// writeGraphStatus is Status's line on the memory graphs keep, when any
// graph lives.
func writeGraphStatus(b *strings.Builder, n int, held, orphaned uint64) {
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "Graphs: %s, whose work uses %s", plural(n, "graph", "graphs"), config.FormatSize(held))
	if orphaned > 0 {
		fmt.Fprintf(b, " (%s of it in arrays freed since, kept until the graphs are freed)", config.FormatSize(orphaned))
	}
	b.WriteString("\n")
}

func (rt *Runtime) memoryWord() string {
	if rt.backend.Name() == "cuda" {
		return "GPU"
	}
	return "device (CPU backend)"
}

func limitString(n uint64) string {
	if n == 0 {
		return "none"
	}
	return config.FormatSize(n)
}

// parseLimit reads the soft or hard limit (name) over a device of total
// bytes. A limit above the device is refused rather than shown as a limit
// the device could never reach.
func parseLimit(name, value string, total uint64) (uint64, error) {
	v, err := config.ParseLimit(value, total)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if total > 0 && v > total {
		return 0, fmt.Errorf("%s limit %s is more than the device's %s", name, config.FormatSize(v), config.FormatSize(total))
	}
	return v, nil
}

// writePinnedStatus is Status's line on page-locked host memory.
func (rt *Runtime) writePinnedStatus(b *strings.Builder) {
	live, cached, limit := rt.PinnedStats()
	inUse := config.FormatSize(live)
	if n := rt.xfer.downloads.pinnedBytes(); n > 0 {
		// host arrays locked where they lie (PinInPlace) are the
		// script's own memory, not staging the runtime took
		inUse += fmt.Sprintf(" (%s of it host arrays page-locked in place)", config.FormatSize(n))
	}
	fmt.Fprintf(b, "Pinned host memory: %s in use, %s cached; limit %s", inUse, config.FormatSize(cached), limitString(limit))
}

// ResetPeak starts the pool's peak figures again from the current ones.
func (rt *Runtime) ResetPeak() { rt.pool.ResetPeak() }

// Strategy is the pool's allocation strategy: "caching", "cuda" or "none".
func (rt *Runtime) Strategy() string { return rt.pool.Strategy() }
