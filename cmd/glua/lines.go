package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/chzyer/readline"

	"github.com/gluaproject/glua/config"
	compat "github.com/gluaproject/glua/internal/lua51"
)

// errLineInterrupted is Ctrl-C at the prompt: the line, and the statement
// it continued, are dropped.
var errLineInterrupted = errors.New("line interrupted")

// lineReader reads the REPL's lines: with readline's editing, history and
// completion on a terminal, plainly otherwise.
type lineReader interface {
	// readLine shows prompt and returns a line without its newline, or
	// io.EOF at the end of input, or errLineInterrupted.
	readLine(prompt string) (string, error)
	close()
}

func newLineReader(cfg config.Config, complete readline.AutoCompleter) (lineReader, error) {
	if !readline.IsTerminal(int(os.Stdin.Fd())) {
		return &plainReader{in: bufio.NewReader(os.Stdin)}, nil
	}
	rl, err := readline.NewEx(&readline.Config{
		HistoryFile:       historyFile(cfg),
		HistoryLimit:      1000,
		HistorySearchFold: true,
		AutoComplete:      complete,
		EOFPrompt:         "\n", // readline's way to say none: repl ends the line
	})
	if err != nil {
		return nil, fmt.Errorf("readline: %w", err)
	}
	return terminalReader{rl}, nil
}

// historyFile is the history file to use, or "" for none. readline
// silently keeps no history when it cannot open the file, so it is opened
// here first, to warn; the REPL works on either way.
func historyFile(cfg config.Config) string {
	path, err := cfg.HistoryFile()
	if err != nil {
		message(fmt.Sprintf("warning: %v; history will not be kept", err))
		return ""
	}
	if path == "" {
		return ""
	}
	// History may hold secrets typed at the prompt: only its owner reads it.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		message(fmt.Sprintf("warning: history file %s: %s; history will not be kept (set [repl] history or GLUA_REPL_HISTORY)", path, compat.Strerror(err)))
		return ""
	}
	f.Close()
	return path
}

type terminalReader struct{ rl *readline.Instance }

func (t terminalReader) readLine(prompt string) (string, error) {
	t.rl.SetPrompt(prompt)
	line, err := t.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", errLineInterrupted
	}
	return line, err
}

// closeWait bounds the wait for readline's Close.
const closeWait = 200 * time.Millisecond

// close closes readline, which gives the terminal its mode back and closes
// the history file. Its Close waits for its reader goroutine, which a
// Ctrl-D typed while a statement ran leaves blocked on the terminal for
// good; glua is leaving, so it waits only a moment.
func (t terminalReader) close() {
	done := make(chan struct{})
	go func() {
		t.rl.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
}

// plainReader reads lines from a pipe or a file (glua -i < input). It
// writes each line after its prompt, as lua5.1 does through GNU readline,
// so that the output reads as a transcript.
type plainReader struct{ in *bufio.Reader }

func (p *plainReader) readLine(prompt string) (string, error) {
	fmt.Fprint(os.Stdout, prompt)
	line, err := p.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	fmt.Fprintln(os.Stdout, line)
	return line, nil
}

func (p *plainReader) close() {}
