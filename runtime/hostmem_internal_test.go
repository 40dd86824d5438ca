package runtime

import (
	"errors"
	"testing"

	"github.com/gluaproject/glua/internal/anonmem"
)

// A download array's memory comes from the cache when a dropped array of
// its huge-page class left some, and is mapped afresh only otherwise.
func TestDownloadMemoryMapsOnlyWhatTheCacheLacks(t *testing.T) {
	var d downloadMemory
	defer d.release(true)
	m, err := d.take(5<<20, false)
	if errors.Is(err, anonmem.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if maps, _, _ := d.counts(); maps != 1 {
		t.Errorf("the first download mapped %d times, want once", maps)
	}
	clear(m.Bytes())
	d.give(m)
	again, err := d.take(5<<20+7, false) // the same huge-page class
	if err != nil {
		t.Fatal(err)
	}
	if maps, _, _ := d.counts(); maps != 1 || again != m {
		t.Errorf("the second download of the class: %d mappings in all, the first one's memory %v; want the cached memory", maps, again == m)
	}
	d.give(again)
	other, err := d.take(9<<20, false) // a class the cache has none of
	if err != nil {
		t.Fatal(err)
	}
	if maps, _, _ := d.counts(); maps != 2 || other == m {
		t.Errorf("a class the cache has none of: %d mappings in all, want a second one", maps)
	}
	d.give(other)
}
