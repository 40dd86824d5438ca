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
