package cpu

import (
	"fmt"
	"strings"

	"github.com/gluaproject/glua/device"
)

// The CPU backend finishes each piece of work before the call that queued
// it returns, so work on two streams that nothing orders still runs here
// in the order it was queued: a download queued before the wait for the
// product it reads gets the product here, and the product's old contents
// on a GPU. order finds such work, so that the CPU backend refuses what
// would read or write the wrong bytes on a GPU, as it refuses what the
// driver refuses.
//
// Each stream has a vector clock: for every stream, how many of its
// operations the stream's next operation is ordered after. An operation
// ticks its stream's own count; recording an event copies the stream's
// clock into it; waiting on an event on a stream, and the host waiting
// (synchronizing a stream, an event or everything, a blocking copy, an
// event found done), merge that clock in; and what the host has waited
// for orders everything it queues after. Transfers, memsets, matrix
// products and the runtime's kernels (built-in, maps, reductions, and
// kernels.jit's, whose program says which arrays it loads from and
// stores into), which tell Run what they use, note the device bytes
// they read and write, with their stream's tick; one that touches bytes
// that another stream's unordered operation wrote (or writes bytes it
// read) is refused, naming both; a graph's launch notes each recorded
// operation as work of the stream it runs on, and a collective its
// buffers as work of its stream (a root's broadcast only reads, the
// others' write). What order does not see it misses quietly, so that it
// reports only real hazards.
type order struct {
	streams map[device.Stream]clock
	events  map[device.Event]clock
	host    clock
	// hostWaits counts the host's waits; merged[s], the count when s's
	// clock last took the host's in, so that an operation merges it only
	// when it changed.
	hostWaits uint64
	merged    map[device.Stream]uint64
	// touched holds each allocation's most recent accesses, from
	// maxAccesses to twice that: older ones are forgotten, never
	// misreported.
	touched map[*allocation][]access
	// replaying is set while a graph's launch runs one of its recorded
	// operations, which the launch followed as its stream's: what the
	// operation calls to run is not followed again.
	replaying int
}

type clock map[device.Stream]uint64

// access is an operation's read or write of [lo, hi) on stream at tick.
type access struct {
	lo, hi device.Ptr
	write  bool
	stream device.Stream
	tick   uint64
	op     string
}

const maxAccesses = 64

// merge sets c to the later of c and o for every stream.
func (c clock) merge(o clock) {
	for s, t := range o {
		if t > c[s] {
			c[s] = t
		}
	}
}

func (c clock) copy() clock {
	d := make(clock, len(c))
	d.merge(c)
	return d
}

// start makes order's maps, at its first use. b.mu must be held.
func (o *order) start() {
	if o.streams == nil {
		o.streams, o.events, o.host, o.touched = map[device.Stream]clock{}, map[device.Event]clock{}, clock{}, map[*allocation][]access{}
		o.merged = map[device.Stream]uint64{}
	}
}

// streamClock is s's clock, made on first use. b.mu must be held.
func (o *order) streamClock(s device.Stream) clock {
	o.start()
	c := o.streams[s]
	if c == nil {
		c = clock{}
		o.streams[s] = c
	}
	return c
}

// use is one device range an operation reads or writes.
type use struct {
	what   string // "source", "destination", "A", "B", "C"
	p      device.Ptr
	nbytes uint64
	write  bool
}

// follow notes op's uses of device memory on stream s, one tick of s,
// or refuses op when a use is unordered with another stream's access of
// the same bytes that it conflicts with. b.mu must be held.
func (b *Backend) follow(op string, s device.Stream, uses ...use) error {
	o := &b.order
	if o.replaying > 0 {
		return nil
	}
	c := o.current(s)
	tick := c[s] + 1
	var buf [4]*allocation
	allocs := buf[:0]
	for _, u := range uses {
		a := b.containing(u.p)
		allocs = append(allocs, a)
		if a == nil || u.nbytes == 0 {
			continue
		}
		lo, hi := u.p, u.p+device.Ptr(u.nbytes)
		for _, x := range o.touched[a] {
			if x.stream == s || x.hi <= lo || hi <= x.lo || !(x.write || u.write) || c[x.stream] >= x.tick {
				continue
			}
			verb, other := "reads", "writes"
			if u.write {
				verb = "writes"
				if !x.write {
					other = "reads"
				}
			}
			return fmt.Errorf("cpu: %s on stream %d %s device memory (its %s, %d bytes at %#x) that %s on stream %d %s, with nothing ordering the two: "+
				"no event recorded after the %s is waited for on stream %d, and the host has not waited for it. On a GPU they may run in either order; wait for an event (StreamWait) first",
				op, s, verb, u.what, u.nbytes, uint64(u.p), article(x.op), x.stream, other, x.op, s)
		}
	}
	c[s] = tick
	for i, u := range uses {
		a := allocs[i]
		if a == nil || u.nbytes == 0 {
			continue
		}
		o.touched[a] = note(o.touched[a], access{u.p, u.p + device.Ptr(u.nbytes), u.write, s, tick, op})
	}
	return nil
}

// note adds x to an allocation's accesses, newest last. An earlier
// access of the same bytes by the same stream, and of the same kind,
// goes: whatever is ordered after x is ordered after it, and whatever
// conflicts with it conflicts with x, so it says nothing more. A loop of
// work on one array then keeps a few accesses, not maxAccesses of them,
// and a write is not pushed out by the reads after it.
func note(xs []access, x access) []access {
	for k := len(xs) - 1; k >= 0; k-- {
		if y := xs[k]; y.stream == x.stream && y.lo == x.lo && y.hi == x.hi && y.write == x.write {
			copy(xs[k:], xs[k+1:])
			xs[len(xs)-1] = x
			return xs
		}
	}
	xs = append(xs, x)
	if len(xs) >= 2*maxAccesses { // the newest half stays, in place
		xs = xs[:copy(xs, xs[len(xs)-maxAccesses:])]
	}
	return xs
}

// current is s's clock with what the host has waited for merged in.
// b.mu must be held.
func (o *order) current(s device.Stream) clock {
	c := o.streamClock(s)
	if o.merged[s] != o.hostWaits {
		c.merge(o.host)
		o.merged[s] = o.hostWaits
	}
	return c
}

// recordOrder copies s's clock into e. b.mu must be held.
func (b *Backend) recordOrder(e device.Event, s device.Stream) {
	o := &b.order
	o.events[e] = o.current(s).copy()
}

// waitOrder orders s's later work after e's recording. b.mu must be held.
func (b *Backend) waitOrder(s device.Stream, e device.Event) {
	o := &b.order
	c := o.streamClock(s)
	if ec := o.events[e]; ec != nil {
		c.merge(ec)
	}
}

// hostWaitedStream and hostWaitedEvent note that the host waited for
// the work on s, or before e. b.mu must be held.
func (b *Backend) hostWaitedStream(s device.Stream) {
	o := &b.order
	o.host.merge(o.streamClock(s))
	o.hostWaits++
}

func (b *Backend) hostWaitedEvent(e device.Event) {
	o := &b.order
	o.start()
	if ec := o.events[e]; ec != nil {
		o.host.merge(ec)
		o.hostWaits++
	}
}

// hostWaitedAll notes a Synchronize. b.mu must be held.
func (b *Backend) hostWaitedAll() {
	o := &b.order
	o.start()
	for _, c := range o.streams {
		o.host.merge(c)
	}
	o.hostWaits++
}

// forget drops what order knows of a freed allocation. b.mu must be held.
func (b *Backend) forget(a *allocation) {
	delete(b.order.touched, a)
}

// article is op with "a" or "an" before it.
func article(op string) string {
	if op != "" && strings.ContainsRune("aeiou", rune(op[0])) {
		return "an " + op
	}
	return "a " + op
}
