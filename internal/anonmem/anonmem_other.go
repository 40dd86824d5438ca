//go:build !linux

package anonmem

// Map is ErrUnsupported here: only Linux's mappings are used.
func Map(n int) (*Mapping, error) { return nil, ErrUnsupported }

// Unmap does nothing: Map never gives a Mapping here.
func (m *Mapping) Unmap() error { return nil }
