package runtime_test

import (
	"strings"
	"testing"

	"github.com/gluaproject/glua/runtime"
)

// A block of a pinned matrix goes up into a device matrix of its shape,
// and a device matrix comes down into a block, element for element, at
// any row and column, the rest of the host matrix untouched: in
// page-locked memory and in a download's array locked in place. Blocks
// past the host matrix, pageable ones, other dtypes and other ranks are
// refused, naming the problem.
func TestABlockOfAPinnedMatrixCopiesExactly(t *testing.T) {
	eachBackendWith(t, runtime.Options{}, func(t *testing.T, rt *runtime.Runtime) {
		const rows, cols = 1100, 1000 // 4.2 MiB of float32: a download's array is mapped memory
		pinned, err := rt.NewHostArray([]int{rows, cols}, runtime.Float32, true)
		if err != nil {
			t.Fatal(err)
		}
		fillRandom(pinned.Bytes())
		d, err := rt.ToDevice(pinned)
		if err != nil {
			t.Fatal(err)
		}
		downloaded, err := d.CopyToHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		inPlace, ok := rt.PinInPlace(downloaded)
		if !ok {
			t.Fatal("a download's array was not locked in place")
		}
		s, err := rt.CopyStream()
		if err != nil {
			t.Fatal(err)
		}
		for name, src := range map[string]*runtime.HostArray{"pinned": pinned, "in place": inPlace} {
			for _, b := range [][4]int{{1, 1, 1100, 1000}, {5, 9, 11, 7}, {1090, 1, 11, 1000}, {1, 999, 1100, 2}, {700, 500, 1, 1}} {
				i, j, r, c := b[0], b[1], b[2], b[3]
				dst, err := rt.DeviceArray([]int{r, c}, runtime.Float32)
				if err != nil {
					t.Fatal(err)
				}
				if err := dst.CopyFromBlockAsync(src, i, j, s); err != nil {
					t.Fatalf("%s: %dx%d from (%d, %d): %v", name, r, c, i, j, err)
				}
				if err := s.Synchronize(); err != nil {
					t.Fatal(err)
				}
				got, err := dst.CopyToHost(nil)
				if err != nil {
					t.Fatal(err)
				}
				all, g := src.Floats(), got.Floats()
				for y := range r {
					for x := range c {
						if want := all[(i-1+y)*cols+j-1+x]; g[y*c+x] != want && !(g[y*c+x] != g[y*c+x] && want != want) {
							t.Fatalf("%s: %dx%d from (%d, %d): element (%d, %d) is %v, want %v", name, r, c, i, j, y+1, x+1, g[y*c+x], want)
						}
					}
				}
				fillRandom(got.Bytes())
				if err := dst.CopyFrom(got); err != nil {
					t.Fatal(err)
				}
				before := append([]float64(nil), src.Floats()...)
				if err := dst.CopyToBlockAsync(src, i, j, s); err != nil {
					t.Fatalf("%s: %dx%d down to (%d, %d): %v", name, r, c, i, j, err)
				}
				if err := s.Synchronize(); err != nil {
					t.Fatal(err)
				}
				after, g := src.Floats(), got.Floats()
				for e := range after {
					y, x := e/cols-(i-1), e%cols-(j-1)
					want := before[e]
					if y >= 0 && y < r && x >= 0 && x < c {
						want = g[y*c+x]
					}
					if after[e] != want && !(after[e] != after[e] && want != want) {
						t.Fatalf("%s: %dx%d down to (%d, %d): element %d is %v, want %v", name, r, c, i, j, e, after[e], want)
					}
				}
				dst.Free()
			}
		}
		small, _ := rt.DeviceArray([]int{4, 4}, runtime.Float32)
		pageable, _ := rt.NewHostArray([]int{rows, cols}, runtime.Float32, false)
		float64s, _ := rt.NewHostArray([]int{8, 8}, runtime.Float64, true)
		flat, _ := pinned.Reshape([]int{rows * cols})
		for _, c := range []struct {
			name string
			src  *runtime.HostArray
			i, j int
			want string
		}{
			{"past the last row", pinned, 1098, 1, "outside the 1100x1000 source"},
			{"past the last column", pinned, 1, 998, "outside the 1100x1000 source"},
			{"row 0", pinned, 0, 1, "outside the 1100x1000 source"},
			{"pageable", pageable, 1, 1, "not pinned"},
			{"another dtype", float64s, 1, 1, "source is float64, array is float32"},
			{"a flat source", flat, 1, 1, "needs matrices"},
			{"nil", nil, 1, 1, "source is nil"},
		} {
			if err := small.CopyFromBlockAsync(c.src, c.i, c.j, s); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
			}
			want := strings.ReplaceAll(c.want, "source", "destination")
			if err := small.CopyToBlockAsync(c.src, c.i, c.j, s); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s, down: %v, want an error saying %q", c.name, err, want)
			}
		}
	})
}
