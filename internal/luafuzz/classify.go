package luafuzz

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A Class names a kind of mismatch: the feature of the section where the
// outputs part, and how they differ there, as "arith.mod/value". Mismatches
// of one class are, as a rule, one defect.
type Class string

// How two outputs can differ, from the most to the least telling.
const (
	diffCrash   = "crash"   // glua printed Go's panic text
	diffHang    = "hang"    // glua ran out of time where lua5.1 did not
	diffSyntax  = "syntax"  // the program does not compile alike
	diffWording = "wording" // the same error at the same place, worded otherwise
	diffBadArg  = "badarg"  // a library's argument error, worded or placed otherwise
	diffWhere   = "where"   // the same message with a position where lua5.1 has none
	diffNUL     = "nul"     // lua5.1's print stopped at a NUL byte, glua's did not
	diffNaN     = "nan"     // nan where lua5.1 prints -nan, or back
	diffZero    = "zero"    // 0 where lua5.1 prints -0, or back
	diffNumber  = "number"  // only numbers differ, as from arithmetic or number formatting
	diffValue   = "value"   // any other difference in what is printed
	diffExit    = "exit"    // the same output, another exit status
)

// Lua51Hang is the class of a program lua5.1 itself runs out of time on:
// there is no reference to compare glua's output with (lua5.1's own
// output, buffered when it is killed, is lost).
const Lua51Hang Class = "lua5.1/hang"

// Lua51Crash is the class of a program lua5.1 itself dies on, killed by a
// signal (a segmentation fault, glibc's abort on a corrupted heap) where
// glua shows no panic: there is no reference either.
const Lua51Crash Class = "lua5.1/crash"

var (
	goPanic     = regexp.MustCompile(`runtime error: |goroutine \d+|panic: |\[recovered\]`)
	errPosition = regexp.MustCompile(`fuzz\.lua:\d+: `)
	marker      = regexp.MustCompile(`^#(\d+)$`)
)

// Classify names the classes of p's mismatch, one for each section whose
// output differs, or none when want and got agree. Sections are compared
// one by one, so that a difference early in a program does not hide a
// later one of another class; comparing stops at the section where either
// run stopped.
func Classify(p *Program, want, got Outcome) []Class {
	if want == got {
		return nil
	}
	if want.TimedOut && !got.TimedOut {
		return []Class{Lua51Hang}
	}
	if want.Code == -1 && !want.TimedOut && !goPanic.MatchString(got.Message) {
		return []Class{Lua51Crash}
	}
	ws, gs := splitSections(want.Stdout), splitSections(got.Stdout)
	var out []Class
	add := func(section int, diff string) {
		if section == 0 {
			// glua stopped before the first section, as when a function
			// does not compile: the message's line tells where.
			section = p.sectionAt(errorLine(got.Message, want.Message))
		}
		feature := p.Section(section)
		if feature == "" {
			feature = "prelude"
		}
		c := Class(feature + "/" + diff)
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	for i := 0; i < len(ws) && i < len(gs); i++ {
		w, g := ws[i], gs[i]
		final := i == len(ws)-1 || i == len(gs)-1
		if w.number != g.number {
			// One went to another section than the other, as a loop
			// that jumps back into code it left: compare no further.
			add(w.number, difference(want, got, "#"+strconv.Itoa(w.number), "#"+strconv.Itoa(g.number), true))
			break
		}
		if !final {
			if d := firstDifference(w.lines, g.lines); d >= 0 {
				add(w.number, difference(want, got, lineAt(w.lines, d), lineAt(g.lines, d), false))
			}
			continue
		}
		d := firstDifference(w.lines, g.lines)
		switch {
		case d >= 0 && d < len(w.lines) && d < len(g.lines):
			add(w.number, difference(want, got, w.lines[d], g.lines[d], true))
		case d >= 0 || len(ws) != len(gs) || want.Message != got.Message || want.Code != got.Code || want.TimedOut != got.TimedOut:
			// One printed more, or they ended differently: the one that
			// stopped stopped on an error, whose message is what differs.
			add(w.number, difference(want, got, want.Message, got.Message, true))
		}
		break
	}
	return out
}

// section is the output of one section of a program.
type section struct {
	number int
	lines  []string
}

// splitSections cuts output at the lines "#N" that sections print first;
// the output before the first is section 0.
func splitSections(stdout string) []section {
	out := []section{{}}
	for _, l := range strings.Split(stdout, "\n") {
		if m := marker.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, section{number: n})
			continue
		}
		out[len(out)-1].lines = append(out[len(out)-1].lines, l)
	}
	return out
}

// lineAt is lines[i], or "" past the end.
func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// firstDifference is the index of the first line where a and b differ, one
// ending before the other included, or -1.
func firstDifference(a, b []string) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

// errorLine is the line of the first message that has a position in the
// program, or 0.
func errorLine(messages ...string) int {
	for _, m := range messages {
		if sm := errLine.FindStringSubmatch(m); sm != nil {
			n, _ := strconv.Atoi(sm[1])
			return n
		}
	}
	return 0
}

var errLine = regexp.MustCompile(`fuzz\.lua:(\d+):`)

// sectionAt is the section that line (1-based) of the program's source is
// in, or 0 for the prelude.
func (p *Program) sectionAt(line int) int {
	section := 0
	for i, l := range strings.Split(p.Source(), "\n") {
		if i+1 > line {
			break
		}
		if m := sourceMarker.FindStringSubmatch(l); m != nil {
			section, _ = strconv.Atoi(m[1])
		}
	}
	return section
}

var sourceMarker = regexp.MustCompile(`^print\("#(\d+)"\)$`)

// difference says how two outcomes differ, looking first at the lines
// where they part; final says these are in the section where a run
// stopped, so its end (a crash, a time-out) counts too.
func difference(want, got Outcome, wantLine, gotLine string, final bool) string {
	switch {
	case goPanic.MatchString(gotLine) || final && goPanic.MatchString(got.Message):
		return diffCrash
	case final && got.TimedOut && !want.TimedOut:
		return diffHang
	case final && strings.Contains(want.Message, "near ") && want.Stdout == "" && got.Stdout == "":
		return diffSyntax
	}
	if wantLine != gotLine {
		if w, g := errPosition.FindStringIndex(wantLine), errPosition.FindStringIndex(gotLine); w != nil && g != nil &&
			wantLine[:w[1]] == gotLine[:g[1]] {
			return diffWording
		}
		if strings.Contains(gotLine, "\x00") && cutAtNUL(gotLine) == wantLine {
			return diffNUL
		}
		if errPosition.ReplaceAllString(gotLine, "") == wantLine {
			return diffWhere
		}
		if strings.Contains(wantLine, "bad argument") && strings.Contains(gotLine, "bad argument") {
			return diffBadArg
		}
		if sameBut(wantLine, gotLine, "-nan", "nan") {
			return diffNaN
		}
		if sameBut(wantLine, gotLine, "-0", "0") {
			return diffZero
		}
		if onlyNumbersDiffer(wantLine, gotLine) {
			return diffNumber
		}
		return diffValue
	}
	if want.Code != got.Code && want.Stdout == got.Stdout {
		return diffExit
	}
	return diffValue
}

// sameBut says whether a and b are the same words but for some of a's or
// b's words being x where the other's are y.
func sameBut(a, b, x, y string) bool {
	as, bs := strings.FieldsFunc(a, separator), strings.FieldsFunc(b, separator)
	if len(as) != len(bs) {
		return false
	}
	differs := false
	for i := range as {
		if as[i] == bs[i] {
			continue
		}
		if (as[i] == x && bs[i] == y) || (as[i] == y && bs[i] == x) {
			differs = true
			continue
		}
		return false
	}
	return differs
}

// cutAtNUL is line as lua5.1's print writes it: each value with fputs,
// which stops at a NUL byte.
func cutAtNUL(line string) string {
	fields := strings.Split(line, "\t")
	for i, f := range fields {
		fields[i], _, _ = strings.Cut(f, "\x00")
	}
	return strings.Join(fields, "\t")
}

// onlyNumbersDiffer says whether a and b are the same once every number in
// them, inf and nan included, is taken as the same: numbers written into
// strings by .. count too.
func onlyNumbersDiffer(a, b string) bool {
	return number.ReplaceAllString(a, "N") == number.ReplaceAllString(b, "N")
}

var number = regexp.MustCompile(`[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf|nan|Inf|NaN)`)

func separator(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == ':' }
