package cuda

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/agree"
	"github.com/gluaproject/glua/internal/callhead"
)

// envCommID is where NCCL's bootstrap looks for the address of its root.
const (
	envCommID         = "NCCL_COMM_ID"
	envRuntimeConnect = "NCCL_RUNTIME_CONNECT"
)

// OpenComm joins a group of processes through NCCL, which is opened here
// and not by Load, so that one process never needs it.
//
// The ranks meet through NCCL's own bootstrap: with NCCL_COMM_ID=host:port
// in the environment, ncclGetUniqueId makes no root of its own but writes
// that address and a fixed magic into the id (bootstrap.cc,
// bootstrapGetUniqueId), so every rank computes the same id without a
// store, and ncclCommInitRank on rank 0 starts the bootstrap root on that
// address (init.cc, ncclCommInitRankDev: bootstrapCreateRoot when
// NCCL_COMM_ID is set and myrank == 0). cfg.Addr is put in the environment
// first when it differs, as NCCL reads it with getenv; purego routes
// os.Setenv to the C library's setenv.
func (b *Backend) OpenComm(ctx context.Context, cfg device.CommConfig) (device.Comm, error) {
	if cfg.Size < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.Size {
		return nil, fmt.Errorf("cuda: rank %d of %d is no place in a group", cfg.Rank, cfg.Size)
	}
	if cfg.Addr == "" {
		return nil, fmt.Errorf("cuda: no address where the ranks meet (%s=host:port)", envCommID)
	}
	if os.Getenv(envCommID) != cfg.Addr {
		if err := os.Setenv(envCommID, cfg.Addr); err != nil {
			return nil, fmt.Errorf("cuda: setting %s: %w", envCommID, err)
		}
	}
	// NCCL connects the ranks lazily, at the first collective that needs
	// a connection, and that call blocks until its peer answers: a peer
	// that died after the group formed then held the caller for NCCL's own
	// connection timeout (a minute on two H200s), past [dist] timeout.
	// Connecting while the group forms puts the wait under cfg.Timeout
	// (initComm). A user's own setting stands.
	if _, set := os.LookupEnv(envRuntimeConnect); !set {
		if err := os.Setenv(envRuntimeConnect, "0"); err != nil {
			return nil, fmt.Errorf("cuda: setting %s: %w", envRuntimeConnect, err)
		}
	}
	nl, err := b.ncclLib()
	if err != nil {
		return nil, fmt.Errorf("a group of %d processes on the cuda backend needs NCCL: %w", cfg.Size, err)
	}
	freeBefore, _, _ := b.MemInfo()
	handle, err := b.initComm(ctx, nl, cfg)
	if err != nil {
		return nil, err
	}
	c := &comm{b: b, nccl: nl, handle: handle, rank: cfg.Rank, size: cfg.Size, timeout: cfg.Timeout,
		linked: [2][]bool{make([]bool, cfg.Size), make([]bool, cfg.Size)}}
	if err := c.setUp(); err != nil {
		c.destroy(true)
		c.release()
		return nil, err
	}
	// What NCCL took for the group, read as the device's free memory
	// before and after: NCCL allocates it with the driver, not from the
	// pool, and says nowhere how much. A rank has its device to itself,
	// so nothing else moves the figure meanwhile.
	if freeAfter, _, err := b.MemInfo(); err == nil && freeBefore > freeAfter {
		c.deviceBytes = freeBefore - freeAfter
	}
	b.mu.Lock()
	b.comms[c] = struct{}{}
	b.commsOpen.Store(int32(len(b.comms)))
	b.mu.Unlock()
	if cfg.Size == 1 {
		return c, nil
	}
	if err := c.joinCheck(cfg.Addr); err != nil {
		c.destroy(true)
		c.release()
		return nil, &device.CommError{Rank: c.rank, Msg: fmt.Sprintf("rank %d of %d: %v", c.rank, c.size, err)}
	}
	return c, nil
}

// joinCheck starts the comparison of the ranks' calls (internal/agree),
// which NCCL does not make: rank 0 listens on a port of its own, on the
// host where the ranks met, and an NCCL broadcast tells the others which.
func (c *comm) joinCheck(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port := make([]byte, 4)
	var l net.Listener
	if c.rank == 0 {
		if l, err = net.Listen("tcp", net.JoinHostPort(host, "0")); err != nil {
			return fmt.Errorf("listening for the check of calls: %w", err)
		}
		defer l.Close()
		binary.LittleEndian.PutUint32(port, uint32(l.Addr().(*net.TCPAddr).Port))
	}
	if err := c.b.Upload(c.scratch, port, 0); err != nil {
		return err
	}
	if err := c.Broadcast(c.scratch, len(port), device.Uint8, 0, 0); err != nil {
		return err
	}
	if err := c.wait(); err != nil {
		return err
	}
	if err := c.b.Download(port, c.scratch, 0); err != nil {
		return err
	}
	var check *agree.Checker
	if c.rank == 0 {
		check, err = agree.Root(l, c.size, c.timeout, c.disagreed)
	} else {
		at := net.JoinHostPort(host, strconv.Itoa(int(binary.LittleEndian.Uint32(port))))
		check, err = agree.Join(at, c.rank, c.size, c.timeout, c.disagreed)
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.check = check
	c.mu.Unlock()
	return nil
}

// disagreed aborts the communicator when the check finds that the ranks'
// calls differ, or that a rank left before a call the others made: the
// collective in flight could otherwise wait for its timeout, or reduce
// buffers of different sizes. A rank gone without a goodbye may have
// finished its part of the collective in flight before it went, so that
// one gets lostGrace to finish before the abort (poll, while the host
// waits through the backend; abortIfStuck, while it waits elsewhere, in
// cuCtxSynchronize or in Lua); nothing new is queued meanwhile, since the
// check fails every later call.
func (c *comm) disagreed(e *agree.Error) {
	if e.Gone {
		c.mu.Lock()
		if c.lost == nil {
			c.lost, c.lostAt = e, time.Now()
			time.AfterFunc(lostGrace, c.abortIfStuck)
		}
		c.mu.Unlock()
		return
	}
	c.live(func() error { return c.abortBy(e, true) })
}

// abortIfStuck aborts the communicator when the latest collective has not
// finished lostGrace after a rank went.
func (c *comm) abortIfStuck() {
	c.live(func() error {
		if unfinished, err := c.unfinishedLocked(); unfinished || err != nil {
			return errors.Join(err, c.abortBy(c.lost, false))
		}
		return nil
	})
}

// unfinishedLocked reports whether the latest collective is still
// running, noting it finished when it has. c.mu is held, inside
// begin/end.
func (c *comm) unfinishedLocked() (bool, error) {
	if c.enqueued.IsZero() {
		return false, nil
	}
	switch r := cuResult(c.b.drv.cuEventQuery.call(c.done)); r {
	case cudaSuccess:
		c.enqueued = time.Time{}
		return false, nil
	case cudaErrorNotReady:
		return true, nil
	default:
		return false, c.b.driverError("cuEventQuery", "", r)
	}
}

// lostGrace is how long a collective in flight when a rank left may still
// finish: what the rank sent before it went lands within milliseconds.
const lostGrace = time.Second

// abortBy is abortLocked for a failure the check found: at an earlier
// call, or at this one (a rank that left before it).
func (c *comm) abortBy(e *agree.Error, earlier bool) error {
	msg := e.Msg
	if earlier && !e.Gone && e.Op != "" {
		msg = fmt.Sprintf("the ranks stopped at an earlier %s: %s", e.Op, e.Msg)
	}
	c.abortLocked(msg)
	c.failed.(*device.CommError).Rank = e.Rank
	return c.failed
}

// initComm runs ncclGetUniqueId and ncclCommInitRank, which blocks until
// every rank has joined, on a goroutine of its own, so that a rank that
// never comes costs cfg.Timeout and not forever. On a timeout that
// goroutine is left behind: there is no communicator yet to abort, and
// the process is about to fail anyway.
func (b *Backend) initComm(ctx context.Context, nl *ncclLibrary, cfg device.CommConfig) (uintptr, error) {
	type result struct {
		handle uintptr
		err    error
	}
	done := make(chan result, 1)
	go func() {
		if err := b.begin(); err != nil {
			done <- result{err: err}
			return
		}
		defer b.end()
		var id ncclUniqueID
		if err := nl.check("ncclGetUniqueId", envCommID+"="+cfg.Addr, nl.api.ncclGetUniqueId.call(uintptr(unsafe.Pointer(&id))), 0); err != nil {
			done <- result{err: err}
			return
		}
		handle := new(uintptr)
		r := nl.api.commInitRank(handle, int32(cfg.Size), id, int32(cfg.Rank))
		if r != ncclSuccess {
			done <- result{err: nl.error("ncclCommInitRank", fmt.Sprintf("rank %d of %d at %s", cfg.Rank, cfg.Size, cfg.Addr), int(r), 0)}
			return
		}
		done <- result{handle: *handle}
	}()
	var timeout <-chan time.Time
	if cfg.Timeout > 0 {
		t := time.NewTimer(cfg.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case r := <-done:
		if r.err != nil {
			return 0, &device.CommError{Rank: cfg.Rank, Msg: fmt.Sprintf("rank %d of %d could not join the group at %s: %v", cfg.Rank, cfg.Size, cfg.Addr, r.err)}
		}
		return r.handle, nil
	case <-timeout:
		return 0, &device.CommError{Rank: cfg.Rank, Msg: fmt.Sprintf("rank %d of %d: the group at %s did not form within %v: a peer never came", cfg.Rank, cfg.Size, cfg.Addr, cfg.Timeout)}
	case <-ctx.Done():
		return 0, fmt.Errorf("rank %d of %d: joining the group at %s: %w", cfg.Rank, cfg.Size, cfg.Addr, ctx.Err())
	}
}

// comm is one rank's NCCL communicator. Its collectives are enqueued on
// the caller's stream and return at once; the backend's waits
// (StreamSynchronize, EventSynchronize, Barrier, Close) watch every open
// comm while they wait, so that a peer that died or hung ends the wait
// with an error after the timeout instead of leaving the stream stuck.
type comm struct {
	b          *Backend
	nccl       *ncclLibrary
	rank, size int
	timeout    time.Duration
	// deviceBytes is the device memory the group took outside the pool.
	deviceBytes uint64
	scratch     device.Ptr // Barrier reduces its first byte
	check       *agree.Checker

	mu       sync.Mutex
	handle   uintptr      // ncclComm_t; 0 once destroyed or aborted
	done     uintptr      // CUevent recorded after the latest collective
	enqueued time.Time    // when the latest collective was enqueued; zero once it finished
	failed   error        // why the comm was aborted
	lost     *agree.Error // a rank that left without a goodbye, and when
	lostAt   time.Time
	// linked is, by peer, whether a send to it ([0]) or a recv from it
	// ([1]) has gone into NCCL, which then connected that way (p2p).
	linked [2][]bool
}

func (c *comm) setUp() error {
	if err := c.b.begin(); err != nil {
		return err
	}
	defer c.b.end()
	if err := c.b.check("cuEventCreate", "", cuResult(c.b.drv.cuEventCreate.call(uintptr(unsafe.Pointer(&c.done)), cuEventDisableTiming))); err != nil {
		return err
	}
	p, err := c.b.alloc(4)
	if err != nil {
		return err
	}
	c.scratch = p
	return nil
}

// enqueue runs one NCCL call that queues work on s and records c.done
// after it. Bad arguments come back as NCCL's error; a failure of the
// group aborts the communicator. The call's header goes to the check of
// calls first.
func (c *comm) enqueue(call string, head *callhead.Header, s device.Stream, f func(handle uintptr) uintptr) error {
	return c.live(func() error { return c.enqueueLocked(call, head, s, f) })
}

// live runs f with c.mu held and the device's context current, unless the
// communicator is gone.
func (c *comm) live(f func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handle == 0 {
		return c.gone()
	}
	if err := c.b.begin(); err != nil {
		return err
	}
	defer c.b.end()
	return f()
}

func (c *comm) enqueueLocked(call string, head *callhead.Header, s device.Stream, f func(handle uintptr) uintptr) error {
	if err := c.recordLocked(head); err != nil {
		return err
	}
	r := int(int32(uint32(f(c.handle))))
	switch r {
	case ncclSuccess, ncclInProgress:
	case 4, 5: // ncclInvalidArgument, ncclInvalidUsage: this call, not the group
		return c.nccl.error(call, "", r, c.handle)
	default:
		return c.abortLocked(fmt.Sprintf("rank %d of %d: %v", c.rank, c.size, c.nccl.error(call, "", r, c.handle)))
	}
	if err := c.b.check("cuEventRecord", "", cuResult(c.b.drv.cuEventRecord.call(c.done, uintptr(s)))); err != nil {
		return err
	}
	c.enqueued = time.Now()
	return nil
}

func (c *comm) gone() error {
	if c.failed != nil {
		return c.failed
	}
	return fmt.Errorf("cuda: rank %d of %d: the communicator is closed", c.rank, c.size)
}

// poll reports a fault of the group: an asynchronous NCCL error, or the
// latest collective unfinished c.timeout after it was enqueued. Either
// aborts the communicator, which also ends its kernels, so the streams
// they hold drain. It runs inside begin/end.
func (c *comm) poll() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handle == 0 {
		return c.failed
	}
	var async int32
	if err := c.nccl.check("ncclCommGetAsyncError", "", c.nccl.api.ncclCommGetAsyncError.call(c.handle, uintptr(unsafe.Pointer(&async))), c.handle); err != nil {
		return c.abortLocked(fmt.Sprintf("rank %d of %d: %v", c.rank, c.size, err))
	}
	if async != ncclSuccess && async != ncclInProgress {
		return c.abortLocked(fmt.Sprintf("rank %d of %d: NCCL reports %v", c.rank, c.size, c.nccl.error("ncclCommGetAsyncError", "", int(async), c.handle)))
	}
	unfinished, err := c.unfinishedLocked()
	switch {
	case err != nil || !unfinished:
		return err
	case c.lost != nil && time.Since(c.lostAt) > lostGrace:
		return c.abortBy(c.lost, false)
	}
	if waited := time.Since(c.enqueued); c.timeout > 0 && waited > c.timeout+c.verdictGrace() {
		return c.timedOutLocked(waited)
	}
	return nil
}

// verdictGrace is how much longer than the timeout a rank other than 0
// waits, so that rank 0, which knows who is missing, names them first.
func (c *comm) verdictGrace() time.Duration {
	if c.rank == 0 {
		return 0
	}
	return time.Second
}

// timedOutLocked aborts a collective unfinished past the timeout, naming
// whom it waited for where this rank knows: rank 0 knows which ranks have
// not made the call, and tells the group; the others hear it from rank 0,
// and only when rank 0 is silent too abort on their own.
func (c *comm) timedOutLocked(waited time.Duration) error {
	if c.rank == 0 && c.check != nil {
		call := c.check.Latest()
		if missing, first := c.check.Missing(); len(missing) > 0 {
			if first != "" {
				call = first
			}
			e := &agree.Error{Op: call, Rank: missing[0], Msg: fmt.Sprintf("%s did not make the %s within the timeout (%v): rank 0 waited for %s",
				ranksText(missing), call, c.timeout, ranksText(missing))}
			c.check.Fail(e)
			return c.abortBy(e, false)
		}
		e := &agree.Error{Op: call, Rank: 0, Msg: fmt.Sprintf("every rank made the %s, which has not finished within the timeout (%v): NCCL's transfer between the ranks stopped",
			call, c.timeout)}
		c.check.Fail(e)
		return c.abortBy(e, false)
	}
	return c.abortLocked(fmt.Sprintf("rank %d of %d: waited %v for the other ranks (timeout %v), and rank 0, which compares the calls, named no rank that missed one: rank 0 is the one waited for",
		c.rank, c.size, waited.Round(time.Millisecond), c.timeout))
}

// ranksText is "rank 2" or "ranks 1, 3".
func ranksText(ranks []int) string {
	s := make([]string, len(ranks))
	for i, r := range ranks {
		s[i] = strconv.Itoa(r)
	}
	if len(ranks) == 1 {
		return "rank " + s[0]
	}
	return "ranks " + strings.Join(s, ", ")
}

// abortLocked aborts the communicator with c.mu held and keeps msg as the
// error of every later call.
func (c *comm) abortLocked(msg string) error {
	if r := int(int32(uint32(c.nccl.api.ncclCommAbort.call(c.handle)))); r != ncclSuccess {
		msg += fmt.Sprintf("; ncclCommAbort: %s", ncclResultName(r))
	}
	c.handle = 0
	c.enqueued = time.Time{}
	c.failed = &device.CommError{Rank: c.rank, Msg: msg + "; the communicator was aborted"}
	return c.failed
}

// waitEvent waits for e, watching every open comm meanwhile. It runs
// inside begin/end. It spins briefly before sleeping, since a small
// collective finishes in microseconds and a sleep costs more than that.
func (b *Backend) waitEvent(call string, e uintptr) error {
	start := time.Now()
	for i := 0; ; i++ {
		switch r := cuResult(b.drv.cuEventQuery.call(e)); r {
		case cudaSuccess:
			return nil
		case cudaErrorNotReady:
		default:
			return b.driverError(call, "", r)
		}
		for _, c := range b.openComms() {
			if err := c.poll(); err != nil {
				return err
			}
		}
		if time.Since(start) > 200*time.Microsecond {
			time.Sleep(min(time.Duration(i)*time.Microsecond, time.Millisecond))
		} else {
			runtime.Gosched()
		}
	}
}

func (b *Backend) openComms() []*comm {
	b.mu.Lock()
	defer b.mu.Unlock()
	cs := make([]*comm, 0, len(b.comms))
	for c := range b.comms {
		cs = append(cs, c)
	}
	return cs
}

func (b *Backend) hasComms() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.comms) > 0
}

// waitStream waits for the work queued on s through an event, so that the
// wait can watch the open comms. It runs inside begin/end.
func (b *Backend) waitStream(s device.Stream) error {
	var e uintptr
	if err := b.check("cuEventCreate", "", cuResult(b.drv.cuEventCreate.call(uintptr(unsafe.Pointer(&e)), cuEventDisableTiming))); err != nil {
		return err
	}
	defer b.drv.cuEventDestroy.call(e)
	if err := b.check("cuEventRecord", "", cuResult(b.drv.cuEventRecord.call(e, uintptr(s)))); err != nil {
		return err
	}
	return b.waitEvent("cuStreamSynchronize", e)
}

// DeviceBytes is the device memory NCCL took for the group when it formed,
// outside glua's pool.
func (c *comm) DeviceBytes() uint64 { return c.deviceBytes }

func (c *comm) AllReduce(buf device.Ptr, count int, dt device.DType, op device.ReduceOp, s device.Stream) error {
	t, o, err := c.types(count, dt, op)
	if err != nil {
		return err
	}
	return c.enqueue("ncclAllReduce", &callhead.Header{Kind: callhead.AllReduce, DType: dt, Op: op, Root: -1, Count: uint64(count)}, s, func(h uintptr) uintptr {
		return c.nccl.api.ncclAllReduce.call(uintptr(buf), uintptr(buf), uintptr(count), t, o, h, uintptr(s))
	})
}

func (c *comm) Broadcast(buf device.Ptr, count int, dt device.DType, root int, s device.Stream) error {
	t, _, err := c.types(count, dt, device.ReduceSum)
	if err != nil {
		return err
	}
	if err := c.peer("root", root); err != nil {
		return err
	}
	return c.enqueue("ncclBroadcast", &callhead.Header{Kind: callhead.Broadcast, DType: dt, Root: int32(root), Count: uint64(count)}, s, func(h uintptr) uintptr {
		return c.nccl.api.ncclBroadcast.call(uintptr(buf), uintptr(buf), uintptr(count), t, uintptr(root), h, uintptr(s))
	})
}

func (c *comm) Reduce(buf device.Ptr, count int, dt device.DType, op device.ReduceOp, root int, s device.Stream) error {
	t, o, err := c.types(count, dt, op)
	if err != nil {
		return err
	}
	if err := c.peer("root", root); err != nil {
		return err
	}
	return c.enqueue("ncclReduce", &callhead.Header{Kind: callhead.Reduce, DType: dt, Op: op, Root: int32(root), Count: uint64(count)}, s, func(h uintptr) uintptr {
		return c.nccl.api.ncclReduce.call(uintptr(buf), uintptr(buf), uintptr(count), t, o, uintptr(root), h, uintptr(s))
	})
}

func (c *comm) AllGather(out, in device.Ptr, count int, dt device.DType, s device.Stream) error {
	t, _, err := c.types(count, dt, device.ReduceSum)
	if err != nil {
		return err
	}
	return c.enqueue("ncclAllGather", &callhead.Header{Kind: callhead.AllGather, DType: dt, Root: -1, Count: uint64(count)}, s, func(h uintptr) uintptr {
		return c.nccl.api.ncclAllGather.call(uintptr(in), uintptr(out), uintptr(count), t, h, uintptr(s))
	})
}

func (c *comm) ReduceScatter(out, in device.Ptr, count int, dt device.DType, op device.ReduceOp, s device.Stream) error {
	t, o, err := c.types(count, dt, op)
	if err != nil {
		return err
	}
	return c.enqueue("ncclReduceScatter", &callhead.Header{Kind: callhead.ReduceScatter, DType: dt, Op: op, Root: -1, Count: uint64(count)}, s, func(h uintptr) uintptr {
		return c.nccl.api.ncclReduceScatter.call(uintptr(in), uintptr(out), uintptr(count), t, o, h, uintptr(s))
	})
}

// Send and Recv each make a group of one operation: a point-to-point call
// outside a group would block on the host until the peer posts its half
// on older NCCL versions.
func (c *comm) Send(buf device.Ptr, count int, dt device.DType, peer int, s device.Stream) error {
	return c.p2p("ncclSend", c.nccl.api.ncclSend, buf, count, dt, peer, s)
}

func (c *comm) Recv(buf device.Ptr, count int, dt device.DType, peer int, s device.Stream) error {
	return c.p2p("ncclRecv", c.nccl.api.ncclRecv, buf, count, dt, peer, s)
}

func (c *comm) p2p(call string, f fn, buf device.Ptr, count int, dt device.DType, peer int, s device.Stream) error {
	t, _, err := c.types(count, dt, device.ReduceSum)
	if err != nil {
		return err
	}
	if err := c.peer("peer", peer); err != nil {
		return err
	}
	if peer == c.rank {
		return fmt.Errorf("cuda: rank %d cannot send to or receive from itself", c.rank)
	}
	kind := callhead.Send
	if call == "ncclRecv" {
		kind = callhead.Recv
	}
	// Counted in bytes, as the CPU backend's ring counts them, so that a
	// pair that differs is worded alike on both backends.
	head := &callhead.Header{Kind: kind, Root: int32(peer), Count: uint64(count) * uint64(dt.Size())}
	way := 0
	if kind == callhead.Recv {
		way = 1
	}
	// NCCL connects two ranks at their first send or recv that way, and
	// until the peer comes to connect too it blocks on the host, with
	// this rank's lock on the communicator held: neither a disagreement
	// found meanwhile nor the timeout could abort it, and a peer that
	// found the pair wrong before its own call never comes. So the first
	// call with each peer each way goes into NCCL only once rank 0 has
	// paired it with the peer's half.
	c.mu.Lock()
	first, check := !c.linked[way][peer], c.check
	c.mu.Unlock()
	if first && check != nil {
		if err := c.live(func() error { return c.recordLocked(head) }); err != nil {
			return err
		}
		if err := c.awaitPair(check, head); err != nil {
			return err
		}
		head = nil // recorded
	}
	err = c.enqueue(call, head, s, func(h uintptr) uintptr {
		if r := c.nccl.api.ncclGroupStart.call(); r != ncclSuccess {
			return r
		}
		r := f.call(uintptr(buf), uintptr(count), t, uintptr(peer), h, uintptr(s))
		if end := c.nccl.api.ncclGroupEnd.call(); r == ncclSuccess {
			r = end
		}
		return r
	})
	if err == nil && first {
		c.mu.Lock()
		c.linked[way][peer] = true
		c.mu.Unlock()
	}
	return err
}

// awaitPair waits (within the timeout) until rank 0 has paired the send
// or recv h, recorded already, with its peer's half, and aborts the
// communicator when the two cannot pair or the peer's never came.
func (c *comm) awaitPair(check *agree.Checker, h *callhead.Header) error {
	err := check.Paired(int(h.Root), c.timeout)
	if err == nil {
		return nil
	}
	return c.live(func() error {
		var late *agree.TimeoutError
		if errors.As(err, &late) {
			e := &agree.Error{Op: h.Kind.String(), Rank: late.Peer, Msg: late.Error()}
			check.Fail(e)
			return c.abortBy(e, false)
		}
		if e, ok := err.(*agree.Error); ok {
			// a pair that cannot be made is this call's failure; any
			// other came from an earlier call
			return c.abortBy(e, e.Op != callhead.Send.String() && e.Op != callhead.Recv.String())
		}
		return err
	})
}

// recordLocked gives the check of calls a call's header (none for the
// barrier's own all-reduce); a failure the check knows of aborts the
// communicator. It runs inside begin/end with c.mu held.
func (c *comm) recordLocked(head *callhead.Header) error {
	if c.check == nil || head == nil {
		return nil
	}
	err := c.check.Call(*head)
	if e, ok := err.(*agree.Error); ok {
		return c.abortBy(e, !e.ThisCall)
	}
	return err
}

// Barrier waits for the check of every call before it, so that calls that
// differed are reported by the barrier at the latest, and then
// all-reduces one byte of the comm's own and waits for it. Checking first
// lets the ranks leave together, as the all-reduce ends on all of them,
// instead of rank 0 a round trip ahead of the others.
func (c *comm) Barrier(s device.Stream) error {
	t, o, err := c.types(1, device.Uint8, device.ReduceMax)
	if err != nil {
		return err
	}
	if err := c.live(func() error { return c.recordLocked(&callhead.Header{Kind: callhead.Barrier, Root: -1}) }); err != nil {
		return err
	}
	if err := c.settle(); err != nil {
		return err
	}
	buf := c.scratch
	if err := c.enqueue("ncclAllReduce", nil, s, func(h uintptr) uintptr {
		return c.nccl.api.ncclAllReduce.call(uintptr(buf), uintptr(buf), 1, t, o, h, uintptr(s))
	}); err != nil {
		return err
	}
	return c.wait()
}

// settle waits for the check of every call so far (agree.Checker.Settle)
// and aborts the communicator when it failed.
func (c *comm) settle() error {
	c.mu.Lock()
	check := c.check
	c.mu.Unlock()
	if check == nil {
		return nil
	}
	timeout := c.timeout
	if timeout > 0 {
		timeout += c.verdictGrace()
	}
	err := check.Settle(timeout)
	if err == nil {
		return nil
	}
	return c.live(func() error {
		if e, ok := err.(*agree.Error); ok {
			return c.abortBy(e, true)
		}
		return c.timedOutLocked(timeout)
	})
}

// wait waits for the latest collective, watching the group.
func (c *comm) wait() error {
	c.mu.Lock()
	e, live := c.done, c.handle != 0
	c.mu.Unlock()
	if !live {
		return c.gone()
	}
	if err := c.b.begin(); err != nil {
		return err
	}
	defer c.b.end()
	return c.b.waitEvent("ncclCommGetAsyncError", e)
}

// Close waits (within the timeout) for the collectives still queued and
// destroys the communicator; when they do not finish it aborts instead,
// since ncclCommDestroy would wait for them forever.
func (c *comm) Close() error {
	waitErr := c.wait()
	if waitErr == nil && c.rank == 0 {
		// Rank 0 reports calls that differed before it leaves. Its
		// collectives have finished, so the others sent their headers
		// of them; the others do not wait for rank 0, which may still
		// be computing long after they end.
		waitErr = c.settle()
	}
	c.mu.Lock()
	live := c.handle != 0
	c.mu.Unlock()
	if !live {
		c.release()
		if waitErr != nil && waitErr != c.failed {
			return waitErr
		}
		return nil
	}
	c.mu.Lock()
	lost := c.lost != nil
	c.mu.Unlock()
	// With a rank gone, ncclCommDestroy could wait for it.
	err := c.destroy(waitErr != nil || lost)
	c.release()
	if waitErr != nil {
		return waitErr
	}
	return err
}

// Abort leaves the group at once: ncclCommAbort, which ends this rank's
// NCCL kernels and waits for no peer, and the check of calls closed
// without a goodbye, so that the others abort what waits on this rank
// rather than wait for their timeout. A rank whose script failed leaves
// so; Close would first wait for the collectives queued.
func (c *comm) Abort() error {
	c.mu.Lock()
	if check := c.check; check != nil {
		check.Abort()
	}
	c.mu.Unlock()
	err := c.destroy(true)
	c.release()
	return err
}

// destroy ends the communicator: ncclCommDestroy, or ncclCommAbort when
// abort is set (a peer is gone and a clean end would wait for it).
func (c *comm) destroy(abort bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handle == 0 {
		return nil
	}
	if err := c.b.begin(); err != nil {
		return err
	}
	defer c.b.end()
	call, f := "ncclCommDestroy", c.nccl.api.ncclCommDestroy
	if abort {
		call, f = "ncclCommAbort", c.nccl.api.ncclCommAbort
	}
	err := c.nccl.check(call, "", f.call(c.handle), 0)
	c.handle = 0
	return err
}

// release frees what the comm holds of the backend's.
func (c *comm) release() {
	c.b.mu.Lock()
	delete(c.b.comms, c)
	c.b.commsOpen.Store(int32(len(c.b.comms)))
	c.b.mu.Unlock()
	if c.b.begin() != nil {
		return
	}
	defer c.b.end()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.check != nil {
		c.check.Close()
		c.check = nil
	}
	if c.done != 0 {
		c.b.drv.cuEventDestroy.call(c.done)
		c.done = 0
	}
	if c.scratch != 0 {
		c.b.drv.cuMemFree.call(uintptr(c.scratch))
		c.scratch = 0
	}
}

func (c *comm) types(count int, dt device.DType, op device.ReduceOp) (t, o uintptr, err error) {
	if count < 0 {
		return 0, 0, fmt.Errorf("cuda: %d elements", count)
	}
	if t, err = ncclDataType(dt); err != nil {
		return 0, 0, fmt.Errorf("cuda: %w", err)
	}
	if o, err = ncclRedOp(op); err != nil {
		return 0, 0, fmt.Errorf("cuda: %w", err)
	}
	return t, o, nil
}

func (c *comm) peer(what string, r int) error {
	if r < 0 || r >= c.size {
		return fmt.Errorf("cuda: %s %d is not a rank of a group of %d", what, r, c.size)
	}
	return nil
}
