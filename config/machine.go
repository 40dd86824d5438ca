package config

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
)

// MachineMemory is the host's physical memory in bytes, from the kernel's
// MemTotal; 0 where it cannot be read (not Linux).
var MachineMemory = sync.OnceValue(func() uint64 { return meminfo("MemTotal:") })

// AvailableMemory is the kernel's estimate of the memory new allocations
// can have now (MemAvailable); 0 where it cannot be read.
func AvailableMemory() uint64 { return meminfo("MemAvailable:") }

// meminfo reads one field of /proc/meminfo, in bytes.
func meminfo(field string) uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == field {
			kib, err := strconv.ParseUint(string(f[1]), 10, 64)
			if err != nil {
				return 0
			}
			return kib << 10
		}
	}
	return 0
}

// fallbackMachineMemory stands for the host's memory where it is unknown,
// so that a percentage of it still gives the CPU backend a capacity.
const fallbackMachineMemory = 8 << 30

// shareBase is what a percentage of the machine's memory is taken of.
func shareBase() uint64 {
	if total := MachineMemory(); total > 0 {
		return total
	}
	return fallbackMachineMemory
}

// CPUCapacity is the CPU backend's capacity in bytes: [cpu] memory, a size
// or a percentage of the machine's memory.
func (c Config) CPUCapacity() (uint64, error) {
	return parseShare(strings.TrimSpace(c.CPU.Memory), shareBase())
}

// HostMemoryLimit is [host] memory_limit in bytes, a size or a percentage
// of the machine's memory; 0 means none.
func (c Config) HostMemoryLimit() (uint64, error) {
	return ParseLimit(c.Host.MemoryLimit, shareBase())
}

// PinnedLimit is [host] pinned_limit in bytes, a size or a percentage of
// the machine's memory; 0 means none.
func (c Config) PinnedLimit() (uint64, error) {
	return ParseLimit(c.Host.PinnedLimit, shareBase())
}

// SandboxLuaMemory is [lua] memory_limit's default under a sandbox
// (runtime.Options.Sandbox, glua --sandbox): a tenant's script gets a
// share of the host, not all of it.
const SandboxLuaMemory = 1 << 30

// LuaMemoryLimit is [lua] memory_limit in bytes, and where the number
// came from, for messages. A size or a percentage of the machine's memory
// is taken as it is, and "none" is 0, no limit. Left empty it is the
// host's limit: [host] memory_limit when that is set, else the memory the
// machine has available now (what a script could take before the process
// dies); under a sandbox no more than SandboxLuaMemory of either.
func (c Config) LuaMemoryLimit(sandbox bool) (uint64, string, error) {
	text := strings.TrimSpace(c.Lua.MemoryLimit)
	if text != "" {
		n, err := ParseLimit(text, shareBase())
		return n, "[lua] memory_limit", err
	}
	n, from := AvailableMemory(), "the machine's available memory"
	if n == 0 {
		n = shareBase()
	}
	if host, err := c.HostMemoryLimit(); err != nil {
		return 0, "", err
	} else if host > 0 {
		n, from = host, "[host] memory_limit"
	}
	if sandbox && n > SandboxLuaMemory {
		n, from = SandboxLuaMemory, "the sandbox's default"
	}
	return n, from, nil
}
