// Package dist is glua's support for several processes working together:
// which rank this process is and how many there are, read from the
// environment that a launcher sets (glua --nproc, torchrun, Slurm's srun,
// Open MPI's mpirun). It is plain Go: no Lua, no CUDA, nothing of glua's,
// so that a Go program, the runtime and the command line can all ask it.
//
// The collectives (all_reduce and the rest) are not here yet; this
// package owns only the launch environment.
package dist
