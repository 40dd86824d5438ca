package runtime

import (
	"errors"
	"testing"

	"github.com/gluaproject/glua/internal/anonmem"
)

// Memory that a dropped download array gave back has every page already,
// and take says so: the download into it then skips asking the kernel for
// its pages, which costs a walk of their entries beside every piece.
func TestDownloadMemoryCallsOnlyNewMappingsFresh(t *testing.T) {
	var d downloadMemory
	defer d.release(true)
	m, fresh, err := d.take(5 << 20)
	if errors.Is(err, anonmem.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !fresh {
		t.Error("new memory of the first download is not called fresh")
	}
	clear(m.Bytes())
	d.give(m)
	again, fresh, err := d.take(5<<20 + 7) // the same huge-page class
	if err != nil {
		t.Fatal(err)
	}
	if fresh || again != m {
		t.Errorf("the second download got fresh %v, the first one's memory %v; want the cached memory, not fresh", fresh, again == m)
	}
	d.give(again)
	other, fresh, err := d.take(9 << 20) // a class the cache has none of
	if err != nil {
		t.Fatal(err)
	}
	if !fresh {
		t.Error("memory mapped for a size the cache has none of is not called fresh")
	}
	d.give(other)
}
