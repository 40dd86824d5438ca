// Package workspacetest checks that a memory profile accounts for the
// pool memory a runtime takes for itself rather than for an array: the
// cuBLAS workspace of each stream, which on the GPU is drawn among the
// arrays' segments. It runs against a stand-in for the GPU: the CPU
// backend, registered under the name "cuda", that gives a stream a
// workspace from the runtime's pool the first time it multiplies on it,
// as the cuda backend's cuBLAS handle for the stream does. No other
// package's tests can register it: they link the real cuda backend.
package workspacetest
