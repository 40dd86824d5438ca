package ring

import (
	"encoding/binary"
	"fmt"

	"github.com/gluaproject/glua/device"
)

// kind is the call a header describes.
type kind uint8

const (
	callAllReduce kind = 1 + iota
	callBroadcast
	callReduce
	callAllGather
	callReduceScatter
	callBarrier
	callSend
	callRecv
)

var kindNames = [...]string{
	callAllReduce: "all_reduce", callBroadcast: "broadcast", callReduce: "reduce",
	callAllGather: "all_gather", callReduceScatter: "reduce_scatter", callBarrier: "barrier",
	callSend: "send", callRecv: "recv",
}

func (k kind) String() string {
	if k >= callAllReduce && k <= callRecv {
		return kindNames[k]
	}
	return fmt.Sprintf("call(%d)", uint8(k))
}

// header describes a call. Ranks exchange headers before any data, so that
// calls that disagree fail with a message instead of exchanging garbage or
// waiting for data that never comes.
type header struct {
	kind  kind
	dtype device.DType // Invalid where the call moves bytes
	op    Op           // 0 where the call does not reduce
	root  int32        // root, or the peer of send and recv; -1 where none
	count uint64       // elements of dtype, or bytes
}

const headerSize = 15

func (h header) encode() []byte {
	b := []byte{byte(h.kind), byte(h.dtype), byte(h.op)}
	b = binary.LittleEndian.AppendUint32(b, uint32(h.root))
	return binary.LittleEndian.AppendUint64(b, h.count)
}

func decodeHeader(b []byte) (header, bool) {
	if len(b) != headerSize {
		return header{}, false
	}
	return header{
		kind:  kind(b[0]),
		dtype: device.DType(b[1]),
		op:    Op(b[2]),
		root:  int32(binary.LittleEndian.Uint32(b[3:])),
		count: binary.LittleEndian.Uint64(b[7:]),
	}, true
}

func (h header) amount() string {
	if h.dtype == device.Invalid {
		return fmt.Sprintf("%d bytes", h.count)
	}
	return fmt.Sprintf("%d %s elements", h.count, h.dtype)
}

// disagreement says how rank j's header a differs from rank i's b, naming
// j first; "" when they agree.
func disagreement(j int, a header, i int, b header) string {
	switch {
	case a.kind != b.kind:
		return fmt.Sprintf("rank %d called %s, rank %d called %s", j, a.kind, i, b.kind)
	case a.dtype != b.dtype:
		return fmt.Sprintf("rank %d has %s, rank %d has %s", j, a.amount(), i, b.amount())
	case a.count != b.count:
		return fmt.Sprintf("rank %d has %s, rank %d has %d", j, a.amount(), i, b.count)
	case a.op != b.op:
		return fmt.Sprintf("rank %d reduces with %s, rank %d with %s", j, a.op, i, b.op)
	case a.root != b.root:
		return fmt.Sprintf("rank %d has root %d, rank %d has root %d", j, a.root, i, b.root)
	}
	return ""
}

// agree gathers every rank's header around the ring and fails unless all
// equal rank 0's. Every rank gathers all of them before it judges, so all
// ranks report the same disagreement: the lowest rank that differs from
// rank 0. Gathering needs every rank, so it is also a barrier.
func (k *call) agree(h header) error {
	c := k.c
	if c.size == 1 {
		return nil
	}
	all := make([]header, c.size)
	enc := make([][]byte, c.size)
	all[c.rank], enc[c.rank] = h, h.encode()
	for s := 0; s < c.size-1; s++ {
		out, in := mod(c.rank-s, c.size), mod(c.rank-s-1, c.size)
		got, err := k.exchange(frameHeader, c.next(), enc[out], c.prev(), nil)
		if err != nil {
			return err
		}
		hin, ok := decodeHeader(got)
		if !ok {
			return &Error{Op: k.op, Rank: c.prev().rank, Msg: fmt.Sprintf("rank %d sent a header of %d bytes (protocol error)", c.prev().rank, len(got))}
		}
		// A rank in send or recv takes no further part in the ring, so
		// waiting for the rest would wait for its timeout.
		if hin.kind == callSend || hin.kind == callRecv {
			return &Error{Op: k.op, Rank: in, Msg: disagreement(in, hin, c.rank, h)}
		}
		all[in], enc[in] = hin, got
	}
	for j := 1; j < c.size; j++ {
		if msg := disagreement(j, all[j], 0, all[0]); msg != "" {
			return &Error{Op: k.op, Rank: j, Msg: msg}
		}
	}
	return nil
}

// agreePair is agree for send and recv: the two ranks swap headers, and a
// send must meet a recv of the same size from the other side. The message
// names the higher rank first on both sides.
func (k *call) agreePair(h header, p *peer) error {
	got, err := k.exchange(frameHeader, p, h.encode(), p, nil)
	if err != nil {
		return err
	}
	theirs, ok := decodeHeader(got)
	if !ok {
		return &Error{Op: k.op, Rank: p.rank, Msg: fmt.Sprintf("rank %d sent a header of %d bytes (protocol error)", p.rank, len(got))}
	}
	me := k.c.rank
	hi, hh, lo, lh := p.rank, theirs, me, h
	if me > p.rank {
		hi, hh, lo, lh = me, h, p.rank, theirs
	}
	pairOf := map[kind]kind{callSend: callRecv, callRecv: callSend}
	switch {
	case theirs.kind != pairOf[h.kind] || int(theirs.root) != me:
		return &Error{Op: k.op, Rank: hi, Msg: fmt.Sprintf("rank %d called %s, rank %d called %s", hi, pairCall(hh), lo, pairCall(lh))}
	case theirs.count != h.count:
		return &Error{Op: k.op, Rank: hi, Msg: fmt.Sprintf("rank %d %s %d bytes, rank %d %s %d", hi, verb(hh.kind), hh.count, lo, verb(lh.kind), lh.count)}
	}
	return nil
}

func pairCall(h header) string {
	switch h.kind {
	case callSend:
		return fmt.Sprintf("send to rank %d", h.root)
	case callRecv:
		return fmt.Sprintf("recv from rank %d", h.root)
	}
	return h.kind.String()
}

func verb(k kind) string {
	if k == callSend {
		return "sends"
	}
	return "receives"
}

func mod(a, n int) int { return ((a % n) + n) % n }
