package batch_test

import (
	"slices"
	"testing"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/runtime"
)

// Every batch of a job belongs to exactly one rank, dealt out in turn, and
// each rank counts and picks its own.
func TestShardsDealEveryBatchToOneRank(t *testing.T) {
	for _, size := range []int{1, 2, 3, 5} {
		for _, n := range []int{0, 1, 4, 7, 10} {
			owner := make([]int, n+1)
			for rank := range size {
				s := batch.Shard{Rank: rank, Size: size}
				var mine []int
				for i := 1; i <= n; i++ {
					if s.Owns(i) {
						owner[i]++
						mine = append(mine, i)
						if (i-1)%size != rank {
							t.Fatalf("rank %d of %d owns batch %d", rank, size, i)
						}
					}
				}
				if s.Count(n) != len(mine) {
					t.Errorf("rank %d of %d: Count(%d) = %d, owns %d", rank, size, n, s.Count(n), len(mine))
				}
				all := make([]int, n)
				for i := range all {
					all[i] = i + 1
				}
				if got := batch.Of(s, all); !slices.Equal(got, mine) {
					t.Errorf("rank %d of %d: Of = %v, want %v", rank, size, got, mine)
				}
			}
			for i := 1; i <= n; i++ {
				if owner[i] != 1 {
					t.Fatalf("%d ranks, %d batches: batch %d has %d owners", size, n, i, owner[i])
				}
			}
		}
	}
}

// An iterator over one rank's share numbers its batches among all of the
// job's, and a shard that is no rank of the job is refused.
func TestShardedIterNumbersBatchesAmongAll(t *testing.T) {
	rt := newRuntime(t, "")
	var all [][]*runtime.HostArray
	for range 7 {
		all = append(all, []*runtime.HostArray{randomHost(t, rt, []int{3}, runtime.Float32, false)})
	}
	s := batch.Shard{Rank: 1, Size: 3}
	it, err := batch.NewIter(rt, batch.List(batch.Of(s, all)), batch.Options{Prefetch: 1, Shard: s})
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	drain(t, it, func(i int, arrays []*runtime.Array) {
		got, _ := arrays[0].CopyToHost(nil)
		if want := all[i-1][0]; !slices.Equal(got.Floats(), want.Floats()) {
			t.Fatalf("batch %d holds %v, want %v", i, got.Floats(), want.Floats())
		}
		seen = append(seen, i)
	})
	if !slices.Equal(seen, []int{2, 5}) {
		t.Fatalf("rank 1 of 3 saw batches %v, want [2 5]", seen)
	}
	for _, bad := range []batch.Shard{{Rank: 3, Size: 3}, {Rank: -1, Size: 2}, {Rank: 1, Size: 0}} {
		if _, err := batch.NewIter(rt, batch.List(nil), batch.Options{Shard: bad}); err == nil {
			t.Errorf("shard %+v was accepted", bad)
		}
	}
}
