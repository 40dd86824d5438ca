package runtime

import (
	"errors"
	"slices"
	"sync"
)

// openComms are the groups OpenComm joined and neither the Comm nor the
// runtime has closed yet: Close leaves those still open, so that a rank
// whose runtime ends tells the others rather than vanishing. Its own lock
// guards the list, since a Comm's Close or Abort, from any goroutine,
// drops the Comm from it.
type openComms struct {
	mu   sync.Mutex
	list []*Comm
}

// add counts c among the open groups.
func (o *openComms) add(c *Comm) {
	o.mu.Lock()
	o.list = append(o.list, c)
	o.mu.Unlock()
}

// forget drops c, closed or aborted, from the open groups.
func (o *openComms) forget(c *Comm) {
	o.mu.Lock()
	o.list = slices.DeleteFunc(o.list, func(other *Comm) bool { return other == c })
	o.mu.Unlock()
}

// deviceBytes is the device memory the open groups hold outside the pool.
func (o *openComms) deviceBytes() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var n uint64
	for _, c := range o.list {
		if m, ok := c.comm.(commMemory); ok {
			n += m.DeviceBytes()
		}
	}
	return n
}

// abort leaves every open group at once (Comm.Abort).
func (o *openComms) abort() error {
	o.mu.Lock()
	comms := slices.Clone(o.list)
	o.mu.Unlock()
	var errs []error
	for _, c := range comms {
		errs = append(errs, c.Abort())
	}
	return errors.Join(errs...)
}

// Close leaves every group still open (Comm.Close).
func (o *openComms) Close() error {
	o.mu.Lock()
	comms := o.list
	o.list = nil
	o.mu.Unlock()
	var errs []error
	for _, c := range comms {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
