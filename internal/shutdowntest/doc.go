// Package shutdowntest checks the order in which a Runtime and a Shared
// pool shut down (see Runtime.Close), against a recording stand-in for the
// GPU: the CPU backend, registered under the name "cuda", that logs every
// call and, like the cuda backend, gives each stream a cuBLAS-style
// workspace from the runtime's pool. No other package's tests can register
// it: they link the real cuda backend.
package shutdowntest
