package bindings_test

import (
	"fmt"
	"testing"
)

// pool.report() groups memory by the line that allocated it; for an
// operator's new array that is the line with the operator, whichever side
// the array is on, so that a loop's temporaries are found where they are
// made.
func TestOperatorResultsAreAllocatedOnTheOperatorsLine(t *testing.T) {
	rt := newRuntime(t)
	mustDo(t, rt, `local cuda = require("cuda"); A = cuda.ones({2, 3}); B = cuda.ones({2, 3})`)
	forms := []string{"A + B", "A - 1", "2 * A", "1 / A", "-A", "(A + 1) * B"}
	src := "R = {}\n"
	for i, f := range forms {
		src += fmt.Sprintf("R[%d] = %s\n", i+1, f)
	}
	if err := rt.DoString(src); err != nil {
		t.Fatal(err)
	}
	sites := map[string]int{}
	for _, b := range rt.Snapshot() {
		sites[b.Site]++
	}
	for i, f := range forms {
		site := fmt.Sprintf("<string>:%d", i+2)
		if sites[site] == 0 {
			t.Errorf("%s on line %d: no array allocated at %s; sites %v", f, i+2, site, sites)
		}
	}
	// (A + 1) * B makes two arrays on its line: the temporary A + 1 too.
	if n := sites["<string>:7"]; n != 2 {
		t.Errorf("(A + 1) * B: %d arrays on its line, want 2", n)
	}
}
