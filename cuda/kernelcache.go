package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
)

// The kernel cache keeps compiled images on disk so that a second run
// loads a kernel in microseconds instead of compiling it again (NVRTC takes
// 50–500 ms a module). An entry is named by the SHA-256 of everything that
// can change the image; its content is a magic string, the SHA-256 of the
// image, and the image, so a truncated or overwritten file is noticed before
// the driver sees it.

var cacheMagic = []byte("GLUAKRN1")

// cacheKey names the entry of one compilation. The program name is part of
// it because line information (-lineinfo, -G) records it. Each field is
// length-prefixed so that no two different inputs hash the same bytes.
func cacheKey(source, name string, options []string, arch string, nvrtcVersion [2]int) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field("glua kernel cache v1")
	field(source)
	field(name)
	field(arch)
	var v [16]byte
	binary.LittleEndian.PutUint64(v[:8], uint64(nvrtcVersion[0]))
	binary.LittleEndian.PutUint64(v[8:], uint64(nvrtcVersion[1]))
	h.Write(v[:])
	for _, o := range options {
		field(o)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func cacheFile(dir, key, arch string) string {
	ext := ".cubin"
	if len(arch) > 8 && arch[:8] == "compute_" {
		ext = ".ptx"
	}
	return filepath.Join(dir, key+ext)
}

var errCacheCorrupt = errors.New("kernel cache entry is corrupt")

// readCacheEntry returns the image stored at path. A missing file is
// os.ErrNotExist; a damaged one errCacheCorrupt.
func readCacheEntry(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	head := len(cacheMagic) + sha256.Size
	if len(data) <= head || !bytes.Equal(data[:len(cacheMagic)], cacheMagic) {
		return nil, errCacheCorrupt
	}
	image := data[head:]
	sum := sha256.Sum256(image)
	if !bytes.Equal(sum[:], data[len(cacheMagic):head]) {
		return nil, errCacheCorrupt
	}
	return image, nil
}

// writeCacheEntry stores image at path atomically: written to a temporary
// file in the same directory, then renamed, so that a concurrent reader
// (another glua process) sees the old entry, the new one, or none.
func writeCacheEntry(path string, image []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(image)
	_, err = tmp.Write(append(append(append([]byte{}, cacheMagic...), sum[:]...), image...))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
