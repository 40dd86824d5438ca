package cpu

import "github.com/gluaproject/glua/device"

// Upload copies src into device memory at dst.
func (b *Backend) Upload(dst device.Ptr, src []byte, s device.Stream) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkStream("upload", s); err != nil {
		return err
	}
	d, err := b.region("upload", "destination", dst, uint64(len(src)))
	if err != nil {
		return err
	}
	copy(d, src)
	return nil
}

// Download copies len(dst) bytes from device memory at src into dst.
func (b *Backend) Download(dst []byte, src device.Ptr, s device.Stream) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkStream("download", s); err != nil {
		return err
	}
	v, err := b.region("download", "source", src, uint64(len(dst)))
	if err != nil {
		return err
	}
	copy(dst, v)
	return nil
}

// Copy copies nbytes from src to dst. Overlapping ranges copy as memmove
// does, which is what a user moving rows within one array expects.
func (b *Backend) Copy(dst, src device.Ptr, nbytes uint64, s device.Stream) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkStream("copy", s); err != nil {
		return err
	}
	from, err := b.region("copy", "source", src, nbytes)
	if err != nil {
		return err
	}
	to, err := b.region("copy", "destination", dst, nbytes)
	if err != nil {
		return err
	}
	copy(to, from)
	return nil
}

// Memset sets nbytes at dst to value.
func (b *Backend) Memset(dst device.Ptr, value byte, nbytes uint64, s device.Stream) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkStream("memset", s); err != nil {
		return err
	}
	d, err := b.region("memset", "destination", dst, nbytes)
	if err != nil {
		return err
	}
	if value == 0 {
		clear(d)
		return nil
	}
	// Doubling copies run at memmove speed; a byte loop is several times
	// slower on large arrays.
	if len(d) > 0 {
		d[0] = value
		for n := 1; n < len(d); n *= 2 {
			copy(d[n:], d[:n])
		}
	}
	return nil
}
