package runtime

import (
	"fmt"

	"github.com/gluaproject/glua/config"
)

// ceiling is what a sandboxed script may set its pool limits to: the
// limits the host set (Options, flags, the configuration, SetLimits), which
// pool.set_limit may lower and raise back, never past. Without it a
// sandboxed script would lift its own hard limit (set_limit{hard = false})
// and, on a Shared pool, starve its neighbours.
type ceiling struct {
	soft, hard         uint64 // bytes; 0: no ceiling
	softFrom, hardFrom string // where each came from, for the error
}

// ceilingOf is the ceiling of a runtime whose configuration gave these
// limits.
func ceilingOf(cfg config.Config, soft, hard uint64) ceiling {
	return ceiling{
		soft: soft, hard: hard,
		softFrom: settingOrigin(cfg, "pool.soft_limit"),
		hardFrom: settingOrigin(cfg, "pool.hard_limit"),
	}
}

// settingOrigin says where a setting came from in words a user can act
// on: the flag, variable or Options field, or the file and key.
func settingOrigin(cfg config.Config, key string) string {
	switch o := cfg.Origin(key); o {
	case "file":
		return fmt.Sprintf("%s in %s", key, cfg.Source)
	case "default":
		return key + "'s default"
	default:
		return o
	}
}

// check refuses a limit past the ceiling: a cleared limit (0) where the
// host set one, or a larger one.
func (c ceiling) check(name string, v, top uint64, from string) error {
	if top == 0 {
		return nil
	}
	if v == 0 {
		return fmt.Errorf("the sandbox cannot clear the %s limit: its ceiling is %s (%s); a sandboxed script may lower its limits and raise them back to the ceiling, not past it",
			name, config.FormatSize(top), from)
	}
	if v > top {
		return fmt.Errorf("%s limit %s is above the sandbox's ceiling of %s (%s); a sandboxed script may lower its limits and raise them back to the ceiling, not past it",
			name, config.FormatSize(v), config.FormatSize(top), from)
	}
	return nil
}

// allows says whether a script may set these limits.
func (c ceiling) allows(soft, hard uint64) error {
	if err := c.check("hard", hard, c.hard, c.hardFrom); err != nil {
		return err
	}
	return c.check("soft", soft, c.soft, c.softFrom)
}
