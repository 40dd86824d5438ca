// Package chromiumtest finds a headless-capable Chromium for the tests
// that open glua's pages in a real browser. Only tests import it. .ci/run
// looks for the browser under the same Names before it installs one, and
// a test keeps its list equal to this one, so that CI neither installs a
// second browser nor fails to find the one that is there.
package chromiumtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Names are the commands a Chromium is installed as, tried in order:
// Debian's package, Ubuntu's and Google's build.
var Names = []string{"chromium", "chromium-browser", "google-chrome"}

// Find returns the path of the first of Names on PATH. Without one it
// skips the test, unless GLUA_REQUIRE_CHROMIUM=1 (as in CI) makes that a
// failure.
func Find(t testing.TB) string {
	t.Helper()
	for _, name := range Names {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("GLUA_REQUIRE_CHROMIUM") == "1" {
		t.Fatalf("GLUA_REQUIRE_CHROMIUM=1 but no Chromium is on PATH as %s (apt-get install chromium)", strings.Join(Names, ", "))
	}
	t.Skipf("no Chromium on PATH as %s: the memory profile is not checked in a browser", strings.Join(Names, ", "))
	return ""
}
