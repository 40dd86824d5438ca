// Package numpytest finds NumPy for the tests that check glua's .npy files
// against NumPy's own reader and writer. Only tests import it.
package numpytest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Python is a python3 that imports numpy, or skips: CI sets
// GLUA_REQUIRE_NUMPY=1 so that a missing NumPy fails there instead.
// $GLUA_PYTHON names one; otherwise python3 on PATH is tried, then
// /usr/bin/python3, where Debian's python3-numpy installs even when a
// version manager puts another python3 first on PATH.
func Python(t testing.TB) string {
	t.Helper()
	path, err := Find()
	if err == nil {
		return path
	}
	if Required() {
		t.Fatalf("GLUA_REQUIRE_NUMPY is set but %v", err)
	}
	t.Skipf("%v; apt-get install python3-numpy, or set GLUA_REQUIRE_NUMPY=1 to fail instead", err)
	return ""
}

// Required reports whether GLUA_REQUIRE_NUMPY is set.
func Required() bool { return os.Getenv("GLUA_REQUIRE_NUMPY") != "" }

// Find is Python's search without the skip: the python3 that imports
// numpy, or an error saying what was tried, for a test that has another
// way to go on without NumPy.
func Find() (string, error) {
	candidates := []string{"python3", "/usr/bin/python3"}
	if p := os.Getenv("GLUA_PYTHON"); p != "" {
		candidates = []string{p}
	}
	var tried []string
	for _, c := range candidates {
		path, err := exec.LookPath(c)
		if err != nil {
			tried = append(tried, c+": not found")
			continue
		}
		out, err := exec.Command(path, "-c", "import numpy").CombinedOutput()
		if err == nil {
			return path, nil
		}
		tried = append(tried, path+": "+strings.TrimSpace(lastLine(string(out))))
	}
	return "", fmt.Errorf("no python3 with numpy was found (%s)", strings.Join(tried, "; "))
}

// Run runs a Python script with arguments and returns what it printed; an
// error exit fails the test with the script's output.
func Run(t testing.TB, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command(Python(t), append([]string{"-c", script}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	return string(out)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
