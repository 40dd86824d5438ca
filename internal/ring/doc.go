// Package ring is the communicator behind the CPU backend's collectives:
// glua's processes exchange buffers over local TCP, a plain ring that stands
// in for NCCL in tests. It aims to be correct and to fail cleanly, not to be
// fast. It owns the connections and the arithmetic of reductions; the rank
// environment, the launcher and the Lua module live elsewhere.
//
// Dial. Rank 0 listens on Config.Addr; every other rank connects there
// (retrying until the timeout, since ranks start at different times) and
// registers its rank, the size it was started with, and its own listener's
// address. Rank 0 answers everyone with the table of addresses, or with why
// not (a rank missing, two ranks with one number, sizes that differ), and
// each rank then connects to every rank below it. The collectives use only
// the connections from a rank to its successor (rank+1 mod Size) and from
// its predecessor; Send and Recv use the rest.
//
// Framing. Every message is a frame: a type byte, an 8-byte little-endian
// length, the payload. Data frames carry exactly the bytes that the agreed
// call says are due; anything else is a protocol error, not data.
//
// Agreement. Every call first exchanges a header (which call, dtype, element
// or byte count, reduction, root or peer). Collectives pass the headers
// around the ring until every rank holds all of them, and then every rank
// compares them with rank 0's, so a disagreement is the same error on every
// rank, naming both sides: "all_reduce: rank 1 has 12 float32 elements,
// rank 0 has 8". Send and Recv swap headers with the peer alone.
//
// Order. AllReduce is a ring reduce-scatter then a ring all-gather; each
// element is reduced in one fixed order for a given Size, so results are
// reproducible. float16 and bfloat16 are combined in float32 and rounded
// back at every step, as NCCL does.
//
// Faults. Every read and write has the deadline Config.Timeout. A rank
// whose call fails sends an abort frame, naming the rank at fault and why,
// to every peer and closes its connections, so its neighbours fail at once
// and the failure goes around the ring instead of waiting for timeouts.
// After a failure a Comm returns the first error from every call.
package ring
