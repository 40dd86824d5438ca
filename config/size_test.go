package config

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	cases := []struct {
		in      string
		want    uint64
		wantErr string
	}{
		{"", 0, ""},
		{"  ", 0, ""},
		{"0", 0, ""},
		{"1073741824", 1 << 30, ""},
		{" 4096 ", 4096, ""},
		{"512MiB", 512 << 20, ""},
		{"1.5GiB", 3 << 29, ""},
		{"1.5 GiB", 3 << 29, ""},
		{"4GiB", 4 << 30, ""},
		{"100M", 100_000_000, ""},
		{"100MB", 100_000_000, ""},
		{"2k", 2000, ""},
		{"1KiB", 1024, ""},
		{"-1", 0, "cannot be negative"},
		{"-512MiB", 0, "cannot be negative"},
		{"50%", 0, "a percentage is not allowed here"},
		{"lots", 0, `"lots" is not a size`},
		{"12 parsecs", 0, "is not a size"},
		{"GiB", 0, "is not a size"},
		{"1e400GiB", 0, "is not a size"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			checkParse(t, "ParseSize", tc.in, got, err, tc.want, tc.wantErr)
		})
	}
}

func TestParseLimit(t *testing.T) {
	const total = 16 << 30
	cases := []struct {
		in      string
		want    uint64
		wantErr string
	}{
		{"", 0, ""},
		{"2GiB", 2 << 30, ""},
		{"100M", 100_000_000, ""},
		{"50%", 8 << 30, ""},
		{" 25 % ", 4 << 30, ""},
		{"100%", 16 << 30, ""},
		{"12.5%", 2 << 30, ""},
		{"0%", 0, "more than 0 and at most 100"},
		{"-10%", 0, "more than 0 and at most 100"},
		{"100.5%", 0, "more than 0 and at most 100"},
		{"NaN%", 0, "is not a percentage"},
		{"half%", 0, `"half%" is not a percentage`},
		{"%", 0, "is not a percentage"},
		{"-2GiB", 0, "cannot be negative"},
		{"lots", 0, `"lots" is not a size`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseLimit(tc.in, total)
			checkParse(t, "ParseLimit", tc.in, got, err, tc.want, tc.wantErr)
		})
	}
}

func checkParse(t *testing.T, fn, in string, got uint64, err error, want uint64, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s(%q) = %d, %v; want an error containing %q", fn, in, got, err, wantErr)
		}
		return
	}
	if err != nil || got != want {
		t.Errorf("%s(%q) = %d, %v; want %d", fn, in, got, err, want)
	}
}

func TestPercentageNeedsTheDeviceTotal(t *testing.T) {
	if _, err := ParseLimit("50%", 0); err == nil {
		t.Error(`ParseLimit("50%", 0) succeeded without knowing the device's memory`)
	}
	if err := CheckLimit("50%"); err != nil {
		t.Errorf(`CheckLimit("50%%") = %v; the form is fine whatever the device`, err)
	}
}

func TestSizesReadBackFromEveryForm(t *testing.T) {
	units := []struct {
		suffix string
		scale  uint64
	}{{"", 1}, {"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}}
	for range 200 {
		u := units[rand.IntN(len(units))]
		n := rand.Uint64N(1<<40/u.scale) + 1
		in := fmt.Sprintf("%d%s", n, u.suffix)
		if got, err := ParseSize(in); err != nil || got != n*u.scale {
			t.Fatalf("ParseSize(%q) = %d, %v; want %d", in, got, err, n*u.scale)
		}
	}
}

func TestPercentagesScaleTheTotal(t *testing.T) {
	for range 200 {
		total := rand.Uint64N(1<<44) + 1
		pct := rand.IntN(100) + 1
		got, err := ParseLimit(fmt.Sprintf("%d%%", pct), total)
		want := float64(total) * float64(pct) / 100
		if err != nil || float64(got) < want-1 || float64(got) > want+1 {
			t.Fatalf("ParseLimit(\"%d%%\", %d) = %d, %v; want about %.0f", pct, total, got, err, want)
		}
	}
}

func TestFormatSizeIsIEC(t *testing.T) {
	cases := map[uint64]string{0: "0 B", 1023: "1023 B", 1 << 10: "1.0 KiB", 3 << 29: "1.5 GiB", 4 << 20: "4.0 MiB"}
	for n, want := range cases {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
