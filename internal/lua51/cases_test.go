package lua51

import (
	"testing"
)

// luaCase is a script and what the reference Lua 5.1 prints for it. The
// expectation is written out so that a test means something where lua5.1
// is not installed; where it is, checkCases also checks the expectation
// against it.
type luaCase struct {
	name, src, want string
}

func checkCases(t *testing.T, cases []luaCase) {
	t.Helper()
	checkCasesWith(t, cases, runGlua)
}

// checkCasesWith is checkCases with glua's side run by run.
func checkCasesWith(t *testing.T, cases []luaCase, run func(t *testing.T, src string) string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(t, tc.src); got != tc.want {
				t.Errorf("glua printed\n%s\nLua 5.1 prints\n%s", got, tc.want)
			}
		})
	}
	t.Run("lua5.1 agrees", func(t *testing.T) {
		lua51Path(t)
		for _, tc := range cases {
			if got := runLua51(t, tc.src); got != tc.want {
				t.Errorf("%s: lua5.1 printed\n%s\nthe test expects\n%s", tc.name, got, tc.want)
			}
		}
	})
}
