// ember/io/safetensors.h — named tensors in the safetensors format (the io layer: below nn and
// optim, which add their checkpoint adapters in ember/nn/serialize.h and ember/optim/serialize.h).
//
// Format (the safetensors specification, https://github.com/huggingface/safetensors, README
// "Format"; files written here load with Python's `safetensors` package and vice versa):
//   - 8 bytes: N, the header length, an unsigned 64-bit little-endian integer;
//   - N bytes: a UTF-8 JSON object, {"NAME": {"dtype": D, "shape": [d0, d1, ...],
//     "data_offsets": [BEGIN, END]}, ...} plus an optional "__metadata__": {"key": "value", ...}
//     (string values only). ember pads the header with spaces to a multiple of 8 bytes, as the
//     reference writer does;
//   - the data buffer: each tensor's elements in row-major (C) order, little-endian, at
//     [BEGIN, END) relative to the start of the buffer. The tensors must tile the buffer exactly:
//     no overlap, no gap, nothing after the last tensor.
//   D is one of "F16", "BF16", "F32", "F64", "I8", "I16", "I32", "I64", "U8", "U16", "U32",
//   "U64", "BOOL" (ember's dtypes; BOOL is one byte per element, any nonzero byte reads as true).
//   Other safetensors dtypes (F8_E4M3, C64, ...) are rejected. A shape of [] is a 0-d tensor
//   (one element).
//
// Errors: every function here throws ember::IOError with a one-line message that names the file
// and the problem: the file cannot be opened, read or written; it is truncated; the header length
// runs past the end of the file; the header is not a JSON object; a tensor entry has a missing,
// unexpected or ill-typed field; an unknown dtype; data_offsets out of range, overlapping, leaving
// a gap or not covering the data, or not matching shape x dtype size; a key appears twice in any
// object of the header (a tensor name, a field of an entry such as "shape", a metadata key: the
// reference parser rejects duplicate keys, where a lenient JSON parser keeps the last); or,
// when loading into existing tensors, a missing or unexpected name, a shape mismatch or a dtype
// mismatch. Misuse that is not about a file raises other errors: ValueError for a load target that
// is not a realized buffer (e.g. a view) or a target name given twice; Error for a save or load
// inside a jit capture.
//
// Loading into existing tensors (module parameters and buffers, optimizer state) validates the
// whole file against every target first and only then writes, IN PLACE into each target's buffer:
// on any error nothing is changed, and after a load every tensor keeps its buffer (its storage),
// which is what lets a jit replay that bound those buffers read the loaded values.
//
// Saving is atomic: the file is written to a temporary file in the same directory, flushed to
// disk (fsync) and renamed over `path`, so a reader never sees a partial file and a failed save
// leaves any previous file intact.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "ember/error.h"
#include "ember/tensor.h"

namespace ember {

/// The "__metadata__" map of a safetensors file.
using Metadata = std::map<std::string, std::string>;

/// What a safetensors file holds: its tensors in file order (ascending data offset) and metadata.
struct TensorFile {
  NamedTensors tensors;
  Metadata metadata;
};

/// The safetensors spelling of an ember dtype: "F32", "BF16", "U64", ... (the list above).
const char* safetensors_dtype(ScalarType t);

/// Writes `tensors` (realizing them first) and `metadata` to `path` in the safetensors format.
/// Names must be unique, valid UTF-8 and not "__metadata__". Throws IOError.
void save(const NamedTensors& tensors, const std::string& path, const Metadata& metadata = {});

/// Reads a whole safetensors file into new realized tensors. Throws IOError on a malformed file.
TensorFile load_file(const std::string& path);

/// Loads a file into existing tensors, in place. The file must hold exactly the names in
/// `targets`, each with the target's dtype and shape. `validate`, when given, is called with the
/// file's metadata after every other check and before anything is written; an exception it throws
/// aborts the load with nothing changed. Returns the metadata. Throws IOError.
Metadata load_into(const NamedTensors& targets, const std::string& path,
                   const std::function<void(const Metadata&)>& validate = {});

/// The IOError every safetensors function throws: "safetensors file 'PATH': WHAT" on one line.
[[noreturn]] void throw_safetensors_error(const std::string& path, const std::string& what);

}  // namespace ember
