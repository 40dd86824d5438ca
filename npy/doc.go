// Package npy reads and writes NumPy's .npy format (format versions 1.0,
// 2.0 and 3.0 on read; 1.0, or 2.0 when the header needs it, on write):
// the header, the mapping between NumPy's dtypes and glua's, the data in C
// (row-major) order, and memory-mapping a file's data instead of reading it.
//
// It owns the format and the file: parsing the header's Python literal,
// refusing what glua cannot represent (Fortran order, object and structured
// arrays, dtypes glua has not got) with an error that names the file and
// the reason, byte-swapping big-endian data on read, and writing through a
// temporary file renamed into place, so that a crash or a full disk never
// leaves a half-written file under the final name. A mapping's bytes are
// the file's: where another program truncated it, or a hole in it meets a
// full file system, touching them faults, and Access turns that fault into
// an error naming the file. It does not own arrays or memory limits: the
// runtime decides where the bytes go and counts them.
//
// dtypes map exactly, one to one: float32 '<f4', float64 '<f8', float16
// '<f2', int32 '<i4', int64 '<i8', uint8 '|u1'. bfloat16 has no NumPy
// dtype and is refused on write; convert such an array to float32, which
// holds every bfloat16 value exactly.
package npy
