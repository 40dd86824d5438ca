// Package scriptargs reads scripts/testdata/small_args.txt, the arguments
// that keep each example script quick on the CPU backend, for the tests
// that run the scripts.
package scriptargs

import (
	"fmt"
	"os"
	"strings"
)

// Read returns each listed script's arguments, by file name. A line is a
// script's file name and its arguments, separated by spaces; blank lines
// and lines starting with # are left out.
func Read(path string) (map[string][]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	args := map[string][]string{}
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if _, dup := args[f[0]]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, i+1, f[0])
		}
		args[f[0]] = f[1:]
	}
	return args, nil
}
