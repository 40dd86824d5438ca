package runtime

import (
	"fmt"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/pool"
)

// A runtime takes pool memory for itself as well as for arrays: a
// workspace for each stream's cuBLAS handle (WorkspaceUser), scratch for a
// reduction on the GPU (deviceExec). It is device memory like any other:
// the pool accounts for it and its limits apply. A memory recording
// records it as it records arrays, under what it is for (workspaceSite,
// scratchSite), so that the profile's timeline has every byte its pictures
// of the pool show as used.
//
// Only the runtime's goroutine touches its recording, and this memory is
// taken and given back there: scratch inside a reduction; a workspace
// inside Gemm on one of the runtime's streams (Matmul), and given back
// when that stream is destroyed (Close) or, for the default stream of a
// backend of its own, when the backend closes (Close too).

// workspaceFrom makes p the source of cuBLAS workspaces, so that the pool
// accounts for them and its limits apply. ownerOf is the runtime whose
// stream a workspace serves, nil when no runtime's: it tracks the
// workspace for its memory profile.
//
// The release runs when the handle's stream is destroyed, just before the
// stream goes. The pool notes a free on a stream and records the stream's
// event lazily, when another stream looks for memory; on a shared pool that
// can be long after, from another runtime, on a stream that no longer
// exists. Synchronized records it now, while the stream is alive, so that
// no later call records on the destroyed stream.
func workspaceFrom(p pool.Allocator, ownerOf func(device.Stream) *Runtime) func(nbytes uint64, s device.Stream) (device.Ptr, func(), error) {
	return func(nbytes uint64, s device.Stream) (device.Ptr, func(), error) {
		rt := ownerOf(s)
		blk, err := p.Alloc(nbytes, s)
		if err != nil {
			if rt != nil {
				rt.tookOwn(workspaceSite, nbytes, nil, err)
			}
			return 0, nil, fmt.Errorf("cuBLAS workspace: %w", err)
		}
		if rt != nil {
			rt.addWorkspace(blk)
		}
		return blk.Ptr, func() {
			if rt != nil {
				rt.dropWorkspace(p, blk)
			} else {
				p.Free(blk)
			}
			p.Synchronized()
		}, nil
	}
}

// MatmulWorkspace is the size of the cuBLAS workspace the runtime's own
// stream holds: 0 before its first matrix product, and on a backend that
// takes none (the CPU backend). batch.Matmul leaves room for one under a
// hard limit while there is none.
func (rt *Runtime) MatmulWorkspace() uint64 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, blk := range rt.mem.workspaces {
		if blk.Stream == rt.streams.own {
			return blk.Size
		}
	}
	return 0
}

// addWorkspace keeps blk, a workspace of one of rt's streams, among rt's
// workspaces: they are named in pictures of the pool, and a recording
// begun later starts with them, as it does with the live arrays.
func (rt *Runtime) addWorkspace(blk *pool.Block) {
	rt.mu.Lock()
	rt.mem.addWorkspace(blk)
	rt.mu.Unlock()
	rt.tookOwn(workspaceSite, blk.Size, blk, nil)
}

// dropWorkspace gives the workspace blk back to p, from which it came.
func (rt *Runtime) dropWorkspace(p pool.Allocator, blk *pool.Block) {
	rt.mu.Lock()
	rt.mem.dropWorkspace(blk)
	rt.mu.Unlock()
	if rt.closed.Load() {
		// At Close, after the recording's last look at the pool.
		p.Free(blk)
		return
	}
	rt.freeOwn(p, workspaceSite, blk)
}

// allocOwn takes nbytes from the pool for the runtime itself, for what at
// names, on the runtime's stream.
func (rt *Runtime) allocOwn(at site, nbytes uint64) (*pool.Block, error) {
	blk, err := rt.pool.Alloc(nbytes, rt.streams.own)
	rt.tookOwn(at, nbytes, blk, err)
	return blk, err
}

// tookOwn notes, while recording, an allocation the runtime made for
// itself for at: blk, or the error that refused nbytes.
func (rt *Runtime) tookOwn(at site, nbytes uint64, blk *pool.Block, err error) {
	rec := rt.recording.active()
	if rec == nil {
		return
	}
	if err != nil {
		rt.recordOOM(rec, at, nbytes, err)
		return
	}
	rt.recordAlloc(rec, at, blk)
}

// freeOwn gives blk, which the runtime took for itself for at, back to p.
func (rt *Runtime) freeOwn(p pool.Allocator, at site, blk *pool.Block) error {
	if rec := rt.recording.active(); rec != nil {
		return rt.recordedFree(rec, p, at, blk)
	}
	return p.Free(blk)
}
