package batch

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gluaproject/glua/config"
)

// When a batch iterator draws its progress line.
const (
	ProgressAuto = "" // once the run passes progressAfter, on a terminal
	ProgressOn   = "on"
	ProgressOff  = "off"
)

const (
	progressAfter = 2 * time.Second        // an automatic line waits this long
	progressEvery = 100 * time.Millisecond // and is redrawn at most this often
)

// progress is the one line a batch iterator keeps up to date: batches done
// (of how many, when known), bytes moved, the rate and what is left.
type progress struct {
	out      io.Writer
	mode     string
	terminal bool
	total    int
	done     int
	bytes    uint64
	start    time.Time
	drawn    time.Time
	width    int // of the line on screen, to clear it
	now      func() time.Time
}

func newProgress(mode string, out io.Writer, total int) *progress {
	if out == nil {
		out = os.Stderr
	}
	return &progress{out: out, mode: mode, terminal: isTerminal(out), total: total, now: time.Now}
}

// isTerminal reports whether w is a character device, as a terminal is.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// step counts a delivered batch of n bytes and redraws the line if due.
func (p *progress) step(n uint64) {
	now := p.now()
	if p.start.IsZero() {
		p.start = now
	}
	p.done++
	p.bytes += n
	switch {
	case p.mode == ProgressOff:
		return
	case p.mode == ProgressAuto && (!p.terminal || now.Sub(p.start) < progressAfter):
		return
	case p.width > 0 && now.Sub(p.drawn) < progressEvery && p.done != p.total:
		return
	}
	p.drawn = now
	p.draw(p.line(now))
}

func (p *progress) line(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "batch %d", p.done)
	if p.total > 0 {
		fmt.Fprintf(&b, "/%d", p.total)
	}
	fmt.Fprintf(&b, "  %s", config.FormatSize(p.bytes))
	secs := now.Sub(p.start).Seconds()
	if secs > 0 {
		fmt.Fprintf(&b, "  %.1f GB/s", float64(p.bytes)/secs/1e9)
		if p.total > p.done && p.done > 0 {
			left := time.Duration(secs / float64(p.done) * float64(p.total-p.done) * float64(time.Second))
			fmt.Fprintf(&b, "  ETA %s", left.Round(time.Second))
		}
	}
	return b.String()
}

// draw writes line over the one drawn before.
func (p *progress) draw(line string) {
	pad := max(p.width-len(line), 0)
	fmt.Fprintf(p.out, "\r%s%s", line, strings.Repeat(" ", pad))
	p.width = len(line)
}

// clear removes the line, at the end and on an error.
func (p *progress) clear() {
	if p.width == 0 {
		return
	}
	fmt.Fprintf(p.out, "\r%s\r", strings.Repeat(" ", p.width))
	p.width = 0
}
