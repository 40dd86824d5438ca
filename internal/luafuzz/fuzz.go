package luafuzz

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// Mismatch is a program whose run in glua differs from lua5.1's.
type Mismatch struct {
	Classes   []Class // one for each section that differs
	Program   *Program
	Want, Got Outcome
}

func (m *Mismatch) String() string {
	return fmt.Sprintf("seed %d, %v\n--- program\n%s--- lua5.1: %v--- glua: %v",
		m.Program.Seed, m.Classes, m.Program.Source(), m.Want, m.Got)
}

// Check runs the program of seed in both interpreters and returns its
// mismatch, or nil.
func Check(r Runner, seed uint64) (*Mismatch, error) {
	p := Generate(seed)
	want, got, err := r.Run(p.Source())
	if err != nil {
		return nil, fmt.Errorf("seed %d: %w", seed, err)
	}
	cs := Classify(p, want, got)
	if len(cs) == 0 {
		return nil, nil
	}
	return &Mismatch{Classes: cs, Program: p, Want: want, Got: got}, nil
}

// CheckAll checks the seeds first, first+1, ..., first+n-1 on workers
// goroutines and returns the mismatches in seed order.
func CheckAll(r Runner, first uint64, n, workers int) ([]*Mismatch, error) {
	seeds := make(chan uint64)
	var (
		mu   sync.Mutex
		all  []*Mismatch
		errs []error
		wg   sync.WaitGroup
	)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range seeds {
				m, err := Check(r, s)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if m != nil {
					all = append(all, m)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		seeds <- first + uint64(i)
	}
	close(seeds)
	wg.Wait()
	sort.Slice(all, func(i, j int) bool { return all[i].Program.Seed < all[j].Program.Seed })
	if len(errs) > 0 {
		return all, errs[0]
	}
	return all, nil
}

// Known is the list of mismatch classes glua is known to have, each with
// the defect it stands for: a run tolerates these and fails on any other.
type Known map[Class]string

// Defect is the defect class c stands for: its own line, or a line
// "*/difference" that covers every feature; ok is false for a class not
// listed.
func (k Known) Defect(c Class) (defect string, ok bool) {
	if d, ok := k[c]; ok {
		return d, true
	}
	_, diff, _ := strings.Cut(string(c), "/")
	d, ok := k[Class("*/"+diff)]
	return d, ok
}

// ReadKnown reads a list of known classes: a class and its defect a line,
// with # starting a comment.
func ReadKnown(path string) (Known, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseKnown(f, path)
}

func parseKnown(r io.Reader, name string) (Known, error) {
	k := Known{}
	s := bufio.NewScanner(r)
	for line := 1; s.Scan(); line++ {
		text, _, _ := strings.Cut(s.Text(), "#")
		class, defect, _ := strings.Cut(strings.TrimSpace(text), " ")
		if class == "" {
			continue
		}
		if !strings.Contains(class, "/") || strings.TrimSpace(defect) == "" {
			return nil, fmt.Errorf("%s:%d: want a class feature/difference and the defect it stands for", name, line)
		}
		k[Class(class)] = strings.TrimSpace(defect)
	}
	return k, s.Err()
}

// Tally counts programs by the classes of their mismatches, with the first
// program of each class.
type Tally struct {
	Count map[Class]int
	First map[Class]*Mismatch
}

func NewTally(ms []*Mismatch) Tally {
	t := Tally{Count: map[Class]int{}, First: map[Class]*Mismatch{}}
	for _, m := range ms {
		for _, c := range m.Classes {
			t.Count[c]++
			if t.First[c] == nil {
				t.First[c] = m
			}
		}
	}
	return t
}

// Classes are the tally's classes, the most frequent first.
func (t Tally) Classes() []Class {
	var cs []Class
	for c := range t.Count {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		if t.Count[cs[i]] != t.Count[cs[j]] {
			return t.Count[cs[i]] > t.Count[cs[j]]
		}
		return cs[i] < cs[j]
	})
	return cs
}
