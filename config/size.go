package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
)

// ParseSize reads a size in bytes: a plain number of bytes or a number with
// a unit, SI or IEC ("100M", "512MiB", "1.5GiB"). "" means 0. Percentages
// are not sizes; see ParseLimit.
func ParseSize(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if strings.HasSuffix(s, "%") {
		return 0, fmt.Errorf("%q: a percentage is not allowed here", s)
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("%q: a size cannot be negative", s)
	}
	n, err := humanize.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (try 1073741824, \"512MiB\" or \"1.5GiB\")", s)
	}
	return n, nil
}

// ParseLimit reads a memory limit: a size (see ParseSize) or a percentage of
// total ("50%"). "" and "none" mean no limit and return 0. A limit of zero
// bytes is an error: it reads like "none" but would refuse every
// allocation.
func ParseLimit(s string, total uint64) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return 0, nil
	}
	n, err := parseShare(s, total)
	if err == nil && n == 0 {
		return 0, fmt.Errorf("%q is no memory at all; \"none\" (false in Lua) means no limit", s)
	}
	return n, err
}

// parseShare reads a size or a percentage of total.
func parseShare(s string, total uint64) (uint64, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(f) {
			return 0, fmt.Errorf("%q is not a percentage", s)
		}
		if f <= 0 || f > 100 {
			return 0, fmt.Errorf("%q: a percentage must be more than 0 and at most 100", s)
		}
		if total == 0 {
			return 0, errors.New("a percentage needs the device's total memory, which is not known")
		}
		return uint64(f / 100 * float64(total)), nil
	}
	return ParseSize(s)
}

// CheckLimit validates the form of a limit without knowing the device.
func CheckLimit(s string) error {
	_, err := ParseLimit(s, 1<<40)
	return err
}

// FormatSize prints bytes the way glua always does: IEC units.
func FormatSize(n uint64) string { return humanize.IBytes(n) }
