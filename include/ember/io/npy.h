// ember/io/npy.h — one tensor in NumPy's .npy format (the io layer).
//
// Format (NumPy's specification, numpy/lib/format.py, "Format Version 1.0" to "3.0"):
//   - the magic string "\x93NUMPY", a major and a minor version byte (1.0, 2.0 or 3.0);
//   - the header length, little-endian: 2 bytes (version 1.0) or 4 bytes (2.0 and 3.0);
//   - the header: a Python dict literal with exactly the keys 'descr' (the dtype), 'fortran_order'
//     (True or False) and 'shape' (a tuple of non-negative integers; () is a 0-d array), padded
//     with spaces and ended by '\n';
//   - the data: the elements in C order (Fortran order when fortran_order is True), nothing after.
// The dtypes ember reads and writes: '<f2' float16, '<f4' float32, '<f8' float64, '|i1' int8,
// '<i2' int16, '<i4' int32, '<i8' int64, '|u1' uint8, '<u2' uint16, '<u4' uint32, '<u8' uint64
// and '|b1' bool (one byte; nonzero reads as true). '>' (big-endian) float and integer types are
// read too; '=' means the host's order (little-endian). Other dtypes (complex, object arrays,
// structured dtypes, ...) are rejected. bfloat16 has no NumPy type: writing it throws IOError.
//
// Writing uses version 1.0 (2.0 when the header would not fit 65535 bytes), C order and '<' types,
// with the header padded so that the data starts at a multiple of 64 bytes, as NumPy does. It is
// atomic: a temporary file next to `path`, fsynced and renamed over it.
//
// Errors: IOError naming the file and the problem, on one line: cannot open/read/write; not an
// .npy file (bad magic); an unknown version; a truncated header; a header that is not exactly
// the dict above (a missing, unexpected or repeated key, a malformed value); an unsupported dtype;
// a shape whose element count overflows; data shorter or longer than the shape needs.
#pragma once
#include <string>

#include "ember/tensor.h"

namespace ember {

/// Reads a .npy file into a realized tensor. Throws IOError.
Tensor load_npy(const std::string& path);
/// The same from a file's bytes (`name` stands for the file in errors).
Tensor parse_npy(const std::string& bytes, const std::string& name = "<bytes>");
/// Writes `t` (realizing it first) to `path`. Throws IOError.
void save_npy(const Tensor& t, const std::string& path);
/// The bytes save_npy writes.
std::string format_npy(const Tensor& t);

}  // namespace ember
