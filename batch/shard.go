package batch

import "fmt"

// Shard is one rank's share of a job's batches, for data parallel work:
// of the batches numbered 1, 2, 3, ..., rank Rank (from 0) of Size takes
// Rank+1, Rank+1+Size, Rank+1+2·Size, ..., as a DataLoader's
// DistributedSampler deals them out without shuffling. The zero Shard,
// and any of Size 1, takes every batch.
type Shard struct{ Rank, Size int }

// Owns reports whether batch i (from 1) is the shard's.
func (s Shard) Owns(i int) bool { return s.Size <= 1 || (i-1)%s.Size == s.Rank }

// global is the number among all batches of the shard's k-th (from 1).
func (s Shard) global(k int) int {
	if s.Size <= 1 {
		return k
	}
	return (k-1)*s.Size + s.Rank + 1
}

// Count is how many of n batches the shard owns.
func (s Shard) Count(n int) int {
	if s.Size <= 1 {
		return n
	}
	return max(0, (n-s.Rank+s.Size-1)/s.Size)
}

func (s Shard) check() error {
	if s.Size < 0 || s.Rank < 0 || (s.Size > 0 && s.Rank >= s.Size) || (s.Size == 0 && s.Rank != 0) {
		return fmt.Errorf("shard: rank %d of %d is not a rank of the job", s.Rank, s.Size)
	}
	return nil
}

// Of keeps the items of list that the shard owns, in order.
func Of[T any](s Shard, list []T) []T {
	var out []T
	for i, x := range list {
		if s.Owns(i + 1) {
			out = append(out, x)
		}
	}
	return out
}
