// Package pool is glua's device-memory allocator: every byte of device
// memory a runtime uses is handed out here, in Blocks, and accounted for.
//
// It owns the policy: caching freed memory and reusing it (strategy
// "caching", the default), or passing every request straight through
// ("none"), or deferring caching to the driver's stream-ordered pool
// ("cuda"); the soft and hard limits; the ladder an allocation climbs
// before it fails (cached block, release the cache and retry, let the
// caller collect garbage and retry, then an *OOMError that says where the
// memory is); stream safety when memory moves between streams; quotas
// that let several runtimes share one cache under limits of their own
// (RMM's limiting(pool(source))); and the statistics behind pool.stats().
//
// It is built in layers, each tested alone: a Quota wraps a Pool; the Pool
// keeps the limits, the ladder and the accounting over one strategy; the
// caching strategy is a free list of segments (best fit, split, merge)
// under a stream order that says which stream may reuse freed memory, and
// when.
//
// It does not own the mechanism: raw memory, streams and events come from a
// Source (a backend, found capable of more by type assertion: EventSource,
// DeviceSynchronizer, AsyncSource). It imports no CUDA and nothing of glua
// but the device vocabulary, so every path here runs and is tested on the
// CPU against fake sources. It does not know about arrays, Lua or garbage
// collection: the runtime turns its cleanups into Free calls, and its GC
// into the Pressure hook.
package pool
