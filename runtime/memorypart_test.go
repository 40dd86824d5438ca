package runtime

import (
	"testing"

	"github.com/gluaproject/glua/pool"
)

// The memory part keeps its own books without a Runtime: buffers, blocks
// and arrays stand in for what allocations would have made.
func TestMemoryPartNumbersBuffersAndCountsLiveBytesAndScopes(t *testing.T) {
	var m memoryPart
	outer, inner := &scope{}, &scope{}
	a, b, c := &buffer{}, &buffer{}, &buffer{}
	a.blk.Size, b.blk.Size, c.blk.Size = 256, 1024, 4096
	m.add(a) // outside any scope
	m.pushScope(outer)
	m.add(b)
	m.pushScope(inner)
	m.add(c)
	if a.id != 1 || b.id != 2 || c.id != 3 {
		t.Fatalf("ids %d, %d, %d; want 1, 2, 3 in allocation order", a.id, b.id, c.id)
	}
	if m.buffers.n != 3 || m.buffers.bytes != 5376 {
		t.Fatalf("%d live buffers of %d bytes, want 3 of 5376", m.buffers.n, m.buffers.bytes)
	}
	if len(outer.buffers) != 1 || outer.buffers[0] != b || len(inner.buffers) != 1 || inner.buffers[0] != c {
		t.Fatalf("scopes hold %v and %v; want [b] and [c]", outer.buffers, inner.buffers)
	}
	m.popScope()
	m.passToScope(inner.buffers) // c kept: it passes to the enclosing scope
	if len(outer.buffers) != 2 || outer.buffers[1] != c {
		t.Fatalf("after passing c on, the outer scope holds %v", outer.buffers)
	}
	m.remove(b)
	if m.buffers.n != 2 || m.buffers.bytes != 4352 {
		t.Fatalf("after removing b: %d live buffers of %d bytes, want 2 of 4352", m.buffers.n, m.buffers.bytes)
	}
	live := m.takeAll()
	if len(live) != 2 || m.buffers.n != 0 || m.buffers.bytes != 0 {
		t.Fatalf("takeAll handed over %d buffers and left %d of %d bytes; want 2, and none left", len(live), m.buffers.n, m.buffers.bytes)
	}
}

func TestMemoryPartSaysWhenSomethingIsQueuedAndHandsItOverOnce(t *testing.T) {
	var m memoryPart
	if m.hasQueued() {
		t.Fatal("a new part says something is queued")
	}
	b := &buffer{}
	m.queue(b)
	if !m.hasQueued() {
		t.Fatal("a queued buffer is not announced to drain")
	}
	if p := m.takePending(); len(p) != 1 || p[0] != b || m.hasQueued() {
		t.Fatalf("takePending() = %v, still queued %v; want the buffer, false", p, m.hasQueued())
	}
	if p := m.takePending(); len(p) != 0 {
		t.Fatalf("second takePending() = %v, want none", p)
	}
	// Another part's queue wakes drain too.
	m.wake()
	if !m.hasQueued() {
		t.Fatal("wake does not announce another part's queue")
	}
}

func TestMemoryPartGraduatesYoungArraysAtTheirBounds(t *testing.T) {
	var m memoryPart
	for range youngMax {
		if m.youngFull() {
			t.Fatalf("young list full at %d small arrays, want %d", len(m.young), youngMax)
		}
		m.addYoung(&Array{}, 1)
	}
	if !m.youngFull() {
		t.Fatalf("young list of %d arrays not full", len(m.young))
	}
	var seen int
	m.takeYoung(func(*Array) { seen++ })
	if seen != youngMax || len(m.young) != 0 || m.youngBytes != 0 || m.youngFull() {
		t.Fatalf("takeYoung handed %d arrays, left %d of %d bytes", seen, len(m.young), m.youngBytes)
	}
	m.addYoung(&Array{}, youngMaxBytes)
	if !m.youngFull() {
		t.Fatal("one array of youngMaxBytes does not fill the young list")
	}
}

func TestMemoryPartCountsWorkspaces(t *testing.T) {
	var m memoryPart
	w1, w2 := &pool.Block{Size: 1 << 20}, &pool.Block{Size: 4 << 20}
	m.addWorkspace(w1)
	m.addWorkspace(w2)
	m.dropWorkspace(w1)
	m.dropWorkspace(w1) // a second drop of one workspace changes nothing
	if n, bytes := m.workspaceBytes(); n != 1 || bytes != 4<<20 {
		t.Fatalf("workspaceBytes() = %d, %d; want 1, %d", n, bytes, 4<<20)
	}
}

// The pacer starts a collection once the bytes allocated since the last
// reach the trigger, never under gcMinBytes; what the script freed itself,
// and what a walk of the Lua state looked at, do not count.
func TestGCPacerIsDueAtTheTriggerLessExplicitFreesAndSweptBytes(t *testing.T) {
	var p gcPacer
	trigger, due := p.count(gcMinBytes - 1)
	if due || trigger != gcMinBytes {
		t.Fatalf("count below gcMinBytes: trigger %d, due %v; want %d, false", trigger, due, gcMinBytes)
	}
	if _, due = p.count(1); !due {
		t.Fatal("not due with gcMinBytes allocated")
	}
	p.freed(1 << 20)
	if _, due = p.count(0); due {
		t.Fatal("still due after the script freed 1 MiB itself")
	}
	p.freed(1 << 40) // freeing more than was counted leaves none
	if p.allocatedSinceGC != 0 {
		t.Fatalf("%d bytes counted after freeing more than allocated", p.allocatedSinceGC)
	}

	// A walk of the Lua state uncounts what went to the script and sets
	// the next trigger.
	trigger, _ = p.count(gcMinBytes)
	p.given(gcMinBytes / 2)
	if p.swept(trigger, 64<<20) {
		t.Fatal("still due after a walk looked at half of the bytes")
	}
	if trigger, due = p.count(64<<20 - gcMinBytes/2 - 1); due || trigger != 64<<20 {
		t.Fatalf("below the new trigger: trigger %d, due %v; want %d, false", trigger, due, 64<<20)
	}
	if _, due = p.count(1); !due {
		t.Fatal("not due at the trigger the walk set")
	}
}

func TestGCPacerWaitsForTheLastCollectionOnlyAfterAnotherTrigger(t *testing.T) {
	var p gcPacer
	if start, ended := p.awaitPrevious(gcMinBytes); !start || ended {
		t.Fatalf("none running: start %v, ended %v; want true, false", start, ended)
	}
	done := make(chan struct{})
	p.started(32<<20, done)
	if p.allocatedSinceGC != 0 || p.gcTrigger != 32<<20 {
		t.Fatalf("after starting: %d counted, trigger %d; want 0, %d", p.allocatedSinceGC, p.gcTrigger, 32<<20)
	}
	trigger, _ := p.count(32 << 20)
	if start, _ := p.awaitPrevious(trigger); start {
		t.Fatal("a collection starts while the last runs, one trigger after it")
	}
	close(done)
	if start, ended := p.awaitPrevious(trigger); !start || !ended {
		t.Fatalf("last one ended: start %v, ended %v; want true, true", start, ended)
	}
	if p.collected != nil {
		t.Fatal("the ended collection is still waited for")
	}
	// Two triggers' worth allocated: it waits for the running one.
	running := make(chan struct{})
	p.started(32<<20, running)
	p.count(64 << 20)
	go close(running)
	if start, ended := p.awaitPrevious(trigger); !start || !ended {
		t.Fatalf("two triggers on: start %v, ended %v; want true, true after waiting", start, ended)
	}
}
