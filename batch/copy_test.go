package batch

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestParallelCopyCopiesEveryByte(t *testing.T) {
	for _, n := range []int{0, 1, parallelMin - 1, parallelMin, 3*parallelMin + 7} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rand.IntN(255) + 1)
		}
		dst := make([]byte, n)
		parallelCopy(dst, src)
		if !bytes.Equal(dst, src) {
			t.Fatalf("%d bytes: the copy differs", n)
		}
	}
}

func BenchmarkStagingCopy64MiB(b *testing.B) {
	src, dst := make([]byte, 64<<20), make([]byte, 64<<20)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		parallelCopy(dst, src)
	}
}
