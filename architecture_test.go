package glua_test

import (
	"os"
	"regexp"
	"testing"
)

// docPath is a file path as docs/architecture.md writes one: in
// backquotes, with at least one directory and an extension.
var docPath = regexp.MustCompile("`((?:[a-z0-9_]+/)+[a-z0-9_.]+\\.[a-z]+)`")

// docs/architecture.md says which file holds what: every file it names
// exists, so that the page is changed with the code it describes.
func TestArchitectureNamesOnlyFilesThatExist(t *testing.T) {
	data, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	named := docPath.FindAllStringSubmatch(string(data), -1)
	if len(named) < 10 {
		t.Fatalf("docs/architecture.md names %d files; the check reads paths written as `runtime/xxx.go`", len(named))
	}
	for _, m := range named {
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("docs/architecture.md names %s, which does not exist", m[1])
		}
	}
}
