package device

import (
	"fmt"
	"time"
)

// ReduceOp is how a collective combines the ranks' elements.
type ReduceOp uint8

const (
	ReduceSum ReduceOp = iota + 1
	ReduceProd
	ReduceMax
	ReduceMin
	// ReduceAvg is the sum divided by the number of ranks; integers
	// divide with truncation toward zero, as NCCL's ncclAvg does.
	ReduceAvg
)

var reduceOpNames = [...]string{ReduceSum: "sum", ReduceProd: "prod", ReduceMax: "max", ReduceMin: "min", ReduceAvg: "avg"}

// ParseReduceOp turns "sum", "prod", "max", "min" or "avg" into a ReduceOp.
func ParseReduceOp(name string) (ReduceOp, error) {
	for op := ReduceSum; op <= ReduceAvg; op++ {
		if reduceOpNames[op] == name {
			return op, nil
		}
	}
	return 0, fmt.Errorf("unknown reduction %q (expected sum, prod, max, min or avg)", name)
}

// Valid reports whether op is one of the reductions above.
func (op ReduceOp) Valid() bool { return op >= ReduceSum && op <= ReduceAvg }

func (op ReduceOp) String() string {
	if op.Valid() {
		return reduceOpNames[op]
	}
	return fmt.Sprintf("reduce op %d", uint8(op))
}

// CommConfig says where a rank stands among the processes of one job and
// where they meet.
type CommConfig struct {
	Rank, Size int
	// Addr is host:port where the ranks meet (NCCL_COMM_ID's form).
	Addr string
	// Timeout bounds every wait on another rank, the meeting included.
	Timeout time.Duration
}

// Comm is one rank's communicator on a backend. Its calls are collective:
// every rank makes the same calls in the same order. Buffers are device
// memory and counts are elements of dt. Each call is ordered on stream s
// as a kernel would be: it sees the work queued on s before it, and work
// queued after it sees its result. A backend may return before the data
// has moved (NCCL enqueues); one that reads device memory from the host
// synchronizes s first.
type Comm interface {
	// AllReduce reduces buf over the ranks, in place, on every rank.
	AllReduce(buf Ptr, count int, dt DType, op ReduceOp, s Stream) error
	// Broadcast copies root's buf into every rank's buf.
	Broadcast(buf Ptr, count int, dt DType, root int, s Stream) error
	// Reduce leaves the reduction in root's buf; the others' are unchanged.
	Reduce(buf Ptr, count int, dt DType, op ReduceOp, root int, s Stream) error
	// AllGather fills out (Size×count elements) with every rank's in
	// (count elements), in rank order.
	AllGather(out, in Ptr, count int, dt DType, s Stream) error
	// ReduceScatter leaves in rank r's out (count elements) the reduction
	// of slice r of every rank's in (Size×count elements).
	ReduceScatter(out, in Ptr, count int, dt DType, op ReduceOp, s Stream) error
	// Send and Recv move count elements to or from peer, whose matching
	// call names the same count.
	Send(buf Ptr, count int, dt DType, peer int, s Stream) error
	Recv(buf Ptr, count int, dt DType, peer int, s Stream) error
	// Barrier returns once every rank has called it.
	Barrier(s Stream) error
	// Close leaves the group; later calls fail.
	Close() error
}

// CommAborter is a Comm that can leave its group at once, without Close's
// wait for the work queued: a rank whose program failed must not wait on
// peers that may be waiting on it, and the others learn that it is gone
// instead of waiting for their timeout.
type CommAborter interface {
	Abort() error
}

// CommError is a collective that failed because of one rank: the one that
// exited, timed out, failed, or made a call that did not match the others'.
type CommError struct {
	Rank int
	Msg  string
}

func (e *CommError) Error() string { return e.Msg }
