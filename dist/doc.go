// Package dist is glua's support for several processes working together:
// which rank this process is and how many there are, read from the
// environment that a launcher sets (glua --nproc, torchrun, Slurm's srun,
// Open MPI's mpirun), and a Group that runs collectives (all_reduce and
// the rest) on a runtime's arrays. A Go program uses it without Lua; the
// bindings package makes it the Lua module dist.
//
// The collectives themselves are the backend's (runtime.Collectives):
// this package checks every call's arguments on its own rank before
// anything is sent, gives one process (Size 1) the same API with no
// network and no backend support, and names the call in every error.
package dist
