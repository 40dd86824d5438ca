// Package device is the vocabulary glua's layers share: dtypes and their
// conversions, device addresses, stream and event handles, the description of
// a device, the arguments of a matrix product, and the errors a backend
// reports.
//
// It imports nothing of glua. That is its reason to exist: runtime, pool,
// cuda, cpu and kernels all speak it without importing one another, so the
// arrows of the design point down only.
package device
