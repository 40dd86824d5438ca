package runtime_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/runtime"
)

func TestInfoShowsWhereEachSettingCameFrom(t *testing.T) {
	c := config.Default()
	if err := c.Set("pool.soft_limit", "8MiB", "$GLUA_SOFT_MEMORY_LIMIT"); err != nil {
		t.Fatal(err)
	}
	rt := mustNew(t, runtime.Options{Config: &c, Backend: "cpu", CPUMemory: "64MiB", HardLimit: "16MiB"})
	var b strings.Builder
	if err := rt.WriteInfo(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^  backend +"cpu" +Options\.Backend +GLUA_BACKEND$`,
		`(?m)^  pool\.hard_limit +"16MiB" +Options\.HardLimit +GLUA_HARD_MEMORY_LIMIT$`,
		`(?m)^  pool\.soft_limit +"8MiB" +\$GLUA_SOFT_MEMORY_LIMIT +GLUA_SOFT_MEMORY_LIMIT$`,
		`(?m)^  pool\.strategy +"caching" +default +GLUA_MEMORY_POOL$`,
	} {
		if !regexp.MustCompile(want).MatchString(b.String()) {
			t.Errorf("WriteInfo lacks %s:\n%s", want, b.String())
		}
	}
}

func TestBadOptionIsNamedByItsField(t *testing.T) {
	c := config.Default()
	for _, tc := range []struct {
		opts runtime.Options
		want string
	}{
		{runtime.Options{Config: &c, HardLimit: "lots"}, `Options.HardLimit: "lots" is not a size`},
		{runtime.Options{Config: &c, Device: -1}, `Options.Device: -1 is negative`},
		{runtime.Options{Config: &c, LuaCallDepth: 3}, `Options.LuaCallDepth: 3 is less than 64`},
	} {
		if _, err := runtime.New(tc.opts); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestInfoShowsRegisteredLinesBeforeTheConfiguration(t *testing.T) {
	text := "from the test"
	runtime.RegisterInfo(runtime.InfoLine{Label: "info test line", Text: func() string { return text }})
	rt := mustNew(t, runtime.Options{Backend: "cpu", CPUMemory: "64MiB"})
	var b strings.Builder
	if err := rt.WriteInfo(&b); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?ms)^info test line: from the test\n.*^configuration `).MatchString(b.String()) {
		t.Errorf("WriteInfo lacks the registered line before the configuration:\n%s", b.String())
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a second line under one label did not panic")
		}
	}()
	runtime.RegisterInfo(runtime.InfoLine{Label: "info test line", Text: func() string { return "" }})
}

func TestDeviceCountOfTheCPUBackendIsOne(t *testing.T) {
	c := config.Default()
	c.Backend = "cpu"
	c.CUDA.Device = 3 // a rank's device does not stop the launcher from counting
	name, n, err := runtime.DeviceCount(c)
	if err != nil || name != "cpu" || n != 1 {
		t.Errorf("DeviceCount = %q, %d, %v; want cpu, 1, nil", name, n, err)
	}
}
