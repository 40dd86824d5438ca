// Package callhead describes one collective or point-to-point call of a
// group of processes, so that ranks can compare their calls before (the
// CPU backend's ring) or while (beside NCCL) the data moves, and say how
// two ranks' calls differ in the same words either way.
package callhead

import (
	"encoding/binary"
	"fmt"

	"github.com/gluaproject/glua/device"
)

// Kind is the call a header describes.
type Kind uint8

const (
	AllReduce Kind = 1 + iota
	Broadcast
	Reduce
	AllGather
	ReduceScatter
	Barrier
	Send
	Recv
)

var kindNames = [...]string{
	AllReduce: "all_reduce", Broadcast: "broadcast", Reduce: "reduce",
	AllGather: "all_gather", ReduceScatter: "reduce_scatter", Barrier: "barrier",
	Send: "send", Recv: "recv",
}

func (k Kind) String() string {
	if k >= AllReduce && k <= Recv {
		return kindNames[k]
	}
	return fmt.Sprintf("call(%d)", uint8(k))
}

// Header describes a call: what every rank must agree on.
type Header struct {
	Kind  Kind
	DType device.DType    // Invalid where the call moves bytes
	Op    device.ReduceOp // 0 where the call does not reduce
	Root  int32           // root, or the peer of send and recv; -1 where none
	Count uint64          // elements of DType, or bytes
}

// Size is the length of an encoded Header.
const Size = 15

// Encode is h in Size bytes.
func (h Header) Encode() []byte {
	b := []byte{byte(h.Kind), byte(h.DType), byte(h.Op)}
	b = binary.LittleEndian.AppendUint32(b, uint32(h.Root))
	return binary.LittleEndian.AppendUint64(b, h.Count)
}

// Decode reads what Encode wrote; false when b has the wrong length.
func Decode(b []byte) (Header, bool) {
	if len(b) != Size {
		return Header{}, false
	}
	return Header{
		Kind:  Kind(b[0]),
		DType: device.DType(b[1]),
		Op:    device.ReduceOp(b[2]),
		Root:  int32(binary.LittleEndian.Uint32(b[3:])),
		Count: binary.LittleEndian.Uint64(b[7:]),
	}, true
}

// Amount is what the call moves: "12 float32 elements", "48 bytes".
func (h Header) Amount() string {
	if h.DType == device.Invalid {
		return fmt.Sprintf("%d bytes", h.Count)
	}
	return fmt.Sprintf("%d %s elements", h.Count, h.DType)
}

// Disagreement says how rank j's header a differs from rank i's b, naming
// j first; "" when they agree.
func Disagreement(j int, a Header, i int, b Header) string {
	switch {
	case a.Kind != b.Kind:
		return fmt.Sprintf("rank %d called %s, rank %d called %s", j, a.Kind, i, b.Kind)
	case a.DType != b.DType:
		return fmt.Sprintf("rank %d has %s, rank %d has %s", j, a.Amount(), i, b.Amount())
	case a.Count != b.Count:
		return fmt.Sprintf("rank %d has %s, rank %d has %d", j, a.Amount(), i, b.Count)
	case a.Op != b.Op:
		return fmt.Sprintf("rank %d reduces with %s, rank %d with %s", j, a.Op, i, b.Op)
	case a.Root != b.Root:
		return fmt.Sprintf("rank %d has root %d, rank %d has root %d", j, a.Root, i, b.Root)
	}
	return ""
}

// PairDisagreement says how rank i's point-to-point call a and rank j's
// call b, the two calls between them that the order pairs, fail to make
// a pair: one must send to the other what the other receives from it,
// in as many bytes (Count, with DType Invalid). It names the higher rank
// first, so that both ranks word it alike, and returns that rank as the
// one at fault; "" when they pair.
func PairDisagreement(i int, a Header, j int, b Header) (hi int, msg string) {
	hi, hh, lo, lh := j, b, i, a
	if i > j {
		hi, hh, lo, lh = i, a, j, b
	}
	pairOf := map[Kind]Kind{Send: Recv, Recv: Send}
	switch {
	case b.Kind != pairOf[a.Kind] || int(b.Root) != i || int(a.Root) != j:
		return hi, fmt.Sprintf("rank %d called %s, rank %d called %s", hi, hh.PairCall(), lo, lh.PairCall())
	case a.Count != b.Count:
		return hi, fmt.Sprintf("rank %d %s %d bytes, rank %d %s %d", hi, verb(hh.Kind), hh.Count, lo, verb(lh.Kind), lh.Count)
	}
	return hi, ""
}

// PairCall names a point-to-point call with its peer ("send to rank 1"),
// and any other call by its name.
func (h Header) PairCall() string {
	switch h.Kind {
	case Send:
		return fmt.Sprintf("send to rank %d", h.Root)
	case Recv:
		return fmt.Sprintf("recv from rank %d", h.Root)
	}
	return h.Kind.String()
}

func verb(k Kind) string {
	if k == Send {
		return "sends"
	}
	return "receives"
}
