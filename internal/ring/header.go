package ring

import (
	"fmt"

	"github.com/gluaproject/glua/internal/callhead"
)

type header = callhead.Header

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
	all[c.rank], enc[c.rank] = h, h.Encode()
	for s := 0; s < c.size-1; s++ {
		out, in := mod(c.rank-s, c.size), mod(c.rank-s-1, c.size)
		got, err := k.exchange(frameHeader, c.next(), enc[out], c.prev(), nil)
		if err != nil {
			return err
		}
		hin, ok := callhead.Decode(got)
		if !ok {
			return &Error{Op: k.op, Rank: c.prev().rank, Msg: fmt.Sprintf("rank %d sent a header of %d bytes (protocol error)", c.prev().rank, len(got))}
		}
		// A rank in send or recv takes no further part in the ring, so
		// waiting for the rest would wait for its timeout.
		if hin.Kind == callhead.Send || hin.Kind == callhead.Recv {
			return &Error{Op: k.op, Rank: in, Msg: callhead.Disagreement(in, hin, c.rank, h)}
		}
		all[in], enc[in] = hin, got
	}
	for j := 1; j < c.size; j++ {
		if msg := callhead.Disagreement(j, all[j], 0, all[0]); msg != "" {
			return &Error{Op: k.op, Rank: j, Msg: msg}
		}
	}
	return nil
}

// agreePair is agree for send and recv: the two ranks swap headers, and a
// send must meet a recv of the same size from the other side. The message
// names the higher rank first on both sides.
func (k *call) agreePair(h header, p *peer) error {
	got, err := k.exchange(frameHeader, p, h.Encode(), p, nil)
	if err != nil {
		return err
	}
	theirs, ok := callhead.Decode(got)
	if !ok {
		return &Error{Op: k.op, Rank: p.rank, Msg: fmt.Sprintf("rank %d sent a header of %d bytes (protocol error)", p.rank, len(got))}
	}
	if hi, msg := callhead.PairDisagreement(k.c.rank, h, p.rank, theirs); msg != "" {
		return &Error{Op: k.op, Rank: hi, Msg: msg}
	}
	return nil
}

func mod(a, n int) int { return ((a % n) + n) % n }
