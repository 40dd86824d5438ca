package batch

import (
	"errors"
	"fmt"
	"io"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// Source gives the batches to upload, one call each, in order: a batch is
// the host arrays the loop body gets on the device. It returns nil, nil
// after the last.
type Source func() ([]*runtime.HostArray, error)

// List is a Source over batches known in advance. Arrays that stay as
// they are during the loop can say so with Options.Unchanged.
func List(batches [][]*runtime.HostArray) Source {
	i := 0
	return func() ([]*runtime.HostArray, error) {
		if i == len(batches) {
			return nil, nil
		}
		i++
		return batches[i-1], nil
	}
}

// Options tune an Iter.
type Options struct {
	// Prefetch is how many batches upload ahead of the one the body
	// computes on (1: double buffering); 0 uploads each when it is needed.
	Prefetch int
	// Progress says when to draw a line of progress on ProgressOut
	// (standard error when nil): ProgressOn, ProgressOff, or ProgressAuto,
	// once the run passes two seconds and ProgressOut is a terminal. The
	// line is cleared at the end, on Close and on an error.
	Progress    string
	ProgressOut io.Writer
	// Total is the number of batches, when known, for the progress line.
	Total int
	// Shard, when set, says that the source gives this rank's share of
	// the job's batches (Shard.Owns); Next then numbers each batch among
	// all of them, and Total counts this rank's.
	Shard Shard
	// Unchanged says that the host arrays the source returns do not
	// change during the loop (a List, chunks of one array): their copies
	// then go on while the source is called again, and the staging
	// threads never wait between batches. Otherwise the iterator lets the
	// batches before be copied out of host memory first, since a source
	// may fill one array again and again.
	Unchanged bool
}

// Iter is CUDA.jl's CuIterator: it uploads each batch to the device, the
// next Prefetch batches on a copy stream while the body computes on the
// current one, and frees a batch's device arrays as soon as the next is
// asked for. Host arrays that are not pinned go through pinned staging
// slots of a runtime.Stager, which the iterator reuses; the runtime's
// stream waits, on the device, for a batch's copies before the body's work
// on it runs.
type Iter struct {
	rt       *runtime.Runtime
	source   Source
	prefetch int
	copy     *runtime.Stream
	ahead    []*upload // uploading, oldest first
	current  *upload
	index    int // of the last batch read from the source, among this rank's
	shard    Shard
	stager   *runtime.Stager
	// events no copy is using: the runtime keeps events until it closes,
	// so they are reused.
	events    []*runtime.Event
	progress  *progress
	ended     bool
	closed    bool
	unchanged bool // Options.Unchanged
}

// upload is one batch on its way to the device.
type upload struct {
	index  int
	arrays []*runtime.Array
	copies []*runtime.Staged
	fence  *runtime.Event // recorded on the runtime's stream before the copies
	ready  *runtime.Event // recorded on the copy stream after the copies
}

// NewIter starts an iterator over source.
func NewIter(rt *runtime.Runtime, source Source, opts Options) (*Iter, error) {
	if opts.Prefetch < 0 {
		return nil, fmt.Errorf("prefetch must be 0 or more, got %d", opts.Prefetch)
	}
	if err := opts.Shard.check(); err != nil {
		return nil, err
	}
	switch opts.Progress {
	case ProgressAuto, ProgressOn, ProgressOff:
	default:
		return nil, fmt.Errorf("progress must be %q, %q or automatic, got %q", ProgressOn, ProgressOff, opts.Progress)
	}
	copyStream, err := rt.CopyStream()
	if err != nil {
		return nil, err
	}
	return &Iter{rt: rt, source: source, prefetch: opts.Prefetch, copy: copyStream, shard: opts.Shard, unchanged: opts.Unchanged,
		stager: rt.NewStager(copyStream), progress: newProgress(opts.Progress, opts.ProgressOut, opts.Total)}, nil
}

// Next frees the previous batch's device arrays and returns the next
// batch's, with its index from 1; ok is false after the last. The arrays
// may be used at once: work queued on the runtime's stream runs after
// their copies. After an error, or at the end, everything the iterator
// holds has been freed.
func (it *Iter) Next() (index int, arrays []*runtime.Array, ok bool, err error) {
	if it.closed {
		return 0, nil, false, errors.New("the batch iterator is closed")
	}
	if err := it.retire(it.current); err != nil {
		return 0, nil, false, it.fail(err)
	}
	it.current = nil
	for !it.ended && len(it.ahead) < it.prefetch+1 {
		if err := it.fetch(); err != nil {
			return 0, nil, false, it.fail(err)
		}
	}
	if len(it.ahead) == 0 {
		return 0, nil, false, it.Close()
	}
	u := it.ahead[0]
	it.ahead = it.ahead[1:]
	it.current = u // from here Close frees what it holds
	if err := u.copied(); err != nil {
		return 0, nil, false, it.fail(fmt.Errorf("batch %d: %w", u.index, err))
	}
	if err := it.rt.StreamWait(nil, u.ready); err != nil {
		return 0, nil, false, it.fail(err)
	}
	var n uint64
	for _, a := range u.arrays {
		n += a.NBytes()
	}
	it.progress.step(n)
	return u.index, u.arrays, true, nil
}

// fetch reads the next batch from the source and queues its upload.
func (it *Iter) fetch() error {
	if !it.unchanged {
		for _, u := range it.ahead {
			if err := u.copied(); err != nil {
				return fmt.Errorf("batch %d: %w", u.index, err)
			}
		}
	}
	hosts, err := it.source()
	if err != nil {
		return fmt.Errorf("batch %d: %w", it.shard.global(it.index+1), err)
	}
	if hosts == nil {
		it.ended = true
		return nil
	}
	it.index++
	u := &upload{index: it.shard.global(it.index)}
	it.ahead = append(it.ahead, u) // from here Close frees what it holds
	if err := it.start(u, hosts); err != nil {
		what := fmt.Sprintf("%d arrays", len(hosts))
		if len(hosts) == 1 {
			what = "1 array"
		}
		return fmt.Errorf("batch %d (%s in %s): %w", u.index, config.FormatSize(totalBytes(hosts)), what, err)
	}
	return nil
}

// start allocates u's device arrays and queues their copies with the
// stager, which returns at once. The copies wait, on the device, for the
// work queued so far on the runtime's stream, which may still be reading
// memory the pool has just handed to u; u.ready follows them.
func (it *Iter) start(u *upload, hosts []*runtime.HostArray) error {
	for i, h := range hosts {
		if h == nil {
			return fmt.Errorf("array %d is nil", i+1)
		}
		a, err := it.rt.DeviceArray(h.Shape(), h.DType())
		if err != nil {
			return err
		}
		u.arrays = append(u.arrays, a)
	}
	var err error
	if u.fence, err = it.event(); err != nil {
		return err
	}
	if u.ready, err = it.event(); err != nil {
		return err
	}
	if err := u.fence.Record(nil); err != nil {
		return err
	}
	for i, h := range hosts {
		var after, done *runtime.Event
		if i == 0 {
			after = u.fence
		}
		if i == len(hosts)-1 {
			done = u.ready
		}
		c, err := it.stager.Queue(u.arrays[i], h, after, done)
		if err != nil {
			return err
		}
		u.copies = append(u.copies, c)
	}
	if len(hosts) == 0 {
		return u.ready.Record(it.copy)
	}
	return nil
}

// copied waits until u's bytes have been copied out of host memory and
// its copies queued.
func (u *upload) copied() error {
	for len(u.copies) > 0 {
		if err := u.copies[0].Wait(); err != nil {
			return err
		}
		u.copies = u.copies[1:]
	}
	return nil
}

// event is an event no copy is using.
func (it *Iter) event() (*runtime.Event, error) {
	if n := len(it.events); n > 0 {
		e := it.events[n-1]
		it.events = it.events[:n-1]
		return e, nil
	}
	return it.rt.NewSyncEvent()
}

// retire frees a batch's device arrays and keeps its event for a later
// batch: recording it again leaves the waits queued on it as they were.
func (it *Iter) retire(u *upload) error {
	if u == nil {
		return nil
	}
	var errs []error
	for _, a := range u.arrays {
		errs = append(errs, a.Free())
	}
	for _, e := range []*runtime.Event{u.fence, u.ready} {
		if e != nil {
			it.events = append(it.events, e)
		}
	}
	u.arrays, u.fence, u.ready = nil, nil, nil
	return errors.Join(errs...)
}

// fail closes the iterator after err and returns err. Inside a graph's
// capture, closing waits for the copy stream, which the capture refuses
// as it refused the copy in err: that second refusal says nothing more,
// and the message stays one line.
func (it *Iter) fail(err error) error {
	cerr := it.Close()
	var refused *device.CaptureError
	if cerr == nil || errors.As(err, &refused) && onlyRefusals(cerr) {
		return err
	}
	return errors.Join(err, cerr)
}

// onlyRefusals says whether err, and every error it joins, is a capture's
// refusal.
func onlyRefusals(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !onlyRefusals(e) {
				return false
			}
		}
		return true
	}
	var refused *device.CaptureError
	return errors.As(err, &refused)
}

// Close frees every device array the iterator uploaded and lets go of its
// staging buffers; the loop that breaks early calls it. Closing twice is
// harmless.
func (it *Iter) Close() error {
	if it.closed {
		return nil
	}
	it.closed = true
	it.progress.clear()
	// The stager's threads stop first, so that no copy is queued into
	// arrays about to be freed; its slots go to the next iterator.
	errs := []error{it.stager.Close(), it.copy.Synchronize(), it.retire(it.current)}
	for _, u := range it.ahead {
		errs = append(errs, it.retire(u))
	}
	it.current, it.ahead = nil, nil
	return errors.Join(errs...)
}

func totalBytes(hosts []*runtime.HostArray) uint64 {
	var n uint64
	for _, h := range hosts {
		if h != nil {
			n += h.NBytes()
		}
	}
	return n
}
