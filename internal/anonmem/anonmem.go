// Package anonmem maps fresh anonymous memory for host arrays that are
// written whole before anything reads them: the new array of a download.
//
// Go zeroes a large allocation that reuses its heap's memory, on the
// allocating thread, before the copy into it can start; a fresh mapping's
// pages are zero already and fault in on whichever threads write them
// first. Map aligns the memory to and advises it for huge pages, so that
// where the kernel has transparent huge pages each fault brings 2 MiB.
//
// The memory is not Go's: it lives until Unmap, whatever refers to it.
package anonmem

import "errors"

// Huge is the size of a huge page, to which Map aligns the memory.
const Huge = 2 << 20

// ErrUnsupported is Map's answer where this system has no anonymous
// mappings; the caller allocates some other way.
var ErrUnsupported = errors.New("anonmem: anonymous mappings are not supported here")

// Mapping is one mapped region.
type Mapping struct {
	whole []byte // as mapped, for Unmap
	data  []byte
}

// Bytes is the mapped memory, zero until written: len(Bytes()) is the n
// given to Map. It must not be used after Unmap.
func (m *Mapping) Bytes() []byte { return m.data }
