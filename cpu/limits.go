package cpu

import (
	"fmt"

	"github.com/gluaproject/glua/device"
)

// Limits are the launch limits of the GPU this backend stands in for: the
// runtime refuses a launch beyond them as that GPU would.
func (b *Backend) Limits() device.Limits {
	l, _ := b.limits()
	return l
}

// Describe says, for --info, whose launch limits the backend applies.
func (b *Backend) Describe() []string {
	l, note := b.limits()
	line := fmt.Sprintf("launch limits: %d threads per block, block %d×%d×%d, grid %d×%d×%d, %d KiB static shared memory per block (%d KiB opted in)",
		l.ThreadsPerBlock, l.Block[0], l.Block[1], l.Block[2], l.Grid[0], l.Grid[1], l.Grid[2], l.SharedPerBlock>>10, l.SharedPerBlockOptin>>10)
	if note != "" {
		line += ": " + note
	}
	return []string{line}
}
