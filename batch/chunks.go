package batch

import (
	"fmt"

	"github.com/gluaproject/glua/runtime"
)

// Chunks splits h into views of rows rows of its first dimension each, in
// order; the last may be shorter. The views share h's memory (a memory-
// mapped array stays mapped), so chunking copies nothing.
func Chunks(h *runtime.HostArray, rows int) ([]*runtime.HostArray, error) {
	if rows < 1 {
		return nil, fmt.Errorf("rows must be at least 1, got %d", rows)
	}
	if h.NDim() == 0 {
		return nil, fmt.Errorf("%s has no rows to chunk", h)
	}
	total := h.Shape()[0]
	chunks := make([]*runtime.HostArray, 0, (total+rows-1)/rows)
	for first := 1; first <= total; first += rows {
		c, err := h.Rows(first, min(first+rows-1, total))
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, c)
	}
	return chunks, nil
}
