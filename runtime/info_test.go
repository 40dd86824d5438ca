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
