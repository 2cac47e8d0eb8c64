// ember/serialize.h — checkpoints in the safetensors format: a module's state dict, an optimizer's
// state, or any list of named tensors.
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
//   D is one of "F32", "F64", "I32", "I64", "U8", "BOOL" (ember's dtypes; BOOL is one byte per
//   element, any nonzero byte reads as true). Other safetensors dtypes (F16, BF16, ...) are
//   rejected. A shape of [] is a 0-d tensor (one element).
//
// Errors: every function here throws ember::IOError with a one-line message that names the file
// and the problem: the file cannot be opened, read or written; it is truncated; the header length
// runs past the end of the file; the header is not a JSON object; a tensor entry has a missing,
// unexpected or ill-typed field; an unknown dtype; data_offsets out of range, overlapping, leaving
// a gap or not covering the data, or not matching shape x dtype size; a name appears twice; or,
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
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <system_error>

#include "ember/error.h"
#include "ember/nn/module.h"
#include "ember/optim/optimizer.h"
#include "ember/tensor.h"

namespace ember {

/// The "__metadata__" map of a safetensors file.
using Metadata = std::map<std::string, std::string>;

/// What a safetensors file holds: its tensors in file order (ascending data offset) and metadata.
struct TensorFile {
  nn::NamedTensors tensors;
  Metadata metadata;
};

/// The safetensors spelling of an ember dtype: "F32", "F64", "I32", "I64", "U8" or "BOOL".
const char* safetensors_dtype(ScalarType t);

/// Writes `tensors` (realizing them first) and `metadata` to `path` in the safetensors format.
/// Names must be unique, valid UTF-8 and not "__metadata__". Throws IOError.
void save(const nn::NamedTensors& tensors, const std::string& path, const Metadata& metadata = {});

/// Reads a whole safetensors file into new realized tensors. Throws IOError on a malformed file.
TensorFile load_file(const std::string& path);

/// Loads a file into existing tensors, in place. The file must hold exactly the names in
/// `targets`, each with the target's dtype and shape. `validate`, when given, is called with the
/// file's metadata after every other check and before anything is written; an exception it throws
/// aborts the load with nothing changed. Returns the metadata. Throws IOError.
Metadata load_into(const nn::NamedTensors& targets, const std::string& path,
                   const std::function<void(const Metadata&)>& validate = {});

/// Saves a module's state dict: named_parameters() then named_buffers() (libtorch's names:
/// "0.weight", "encoder.bias", ...). Throws IOError (also when a parameter and a buffer share a
/// name).
void save(const nn::Module& module, const std::string& path, const Metadata& metadata = {});

/// Loads a state dict written by `save(module, ...)` (or by any tool, e.g. Python's safetensors)
/// into the module's existing parameters and buffers, in place. Throws IOError.
void load(nn::Module& module, const std::string& path);

/// The same for module handles: `nn::Sequential net; ember::save(net, "net.safetensors");`.
template <typename Impl>
void save(const nn::ModuleHolder<Impl>& module, const std::string& path,
          const Metadata& metadata = {}) {
  save(static_cast<const nn::Module&>(*module), path, metadata);
}
template <typename Impl>
void load(const nn::ModuleHolder<Impl>& module, const std::string& path) {
  load(static_cast<nn::Module&>(*module), path);
}

// ---- optimizer state
// ------------------------------------------------------------------------------ Header-only so
// that the nn layer does not depend on the optim layer (DESIGN.md, Layout).

/// The metadata key that holds an optimizer's learning rate (shortest round-trip decimal).
inline constexpr const char* kOptimizerLrKey = "lr";

/// Saves `optimizer.state()` (e.g. Adam's "0.exp_avg", "0.exp_avg_sq", ..., "step") and its
/// learning rate (metadata "lr"). Throws IOError.
inline void save(const optim::Optimizer& optimizer, const std::string& path) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), optimizer.lr());
  save(optimizer.state(), path, {{kOptimizerLrKey, std::string(buf, r.ptr)}});
}

/// Loads an optimizer state written by `save(optimizer, ...)` into the optimizer's state tensors,
/// in place, and restores its learning rate. The optimizer must be of the same kind over
/// parameters of the same shapes. Throws IOError (also when "lr" is missing or not a valid
/// non-negative number); on error nothing is changed.
inline void load(optim::Optimizer& optimizer, const std::string& path) {
  double lr = 0;
  load_into(optimizer.state(), path, [&](const Metadata& m) {
    auto it = m.find(kOptimizerLrKey);
    if (it == m.end())
      throw IOError("safetensors file '" + path + "': missing metadata \"" + kOptimizerLrKey +
                    "\" (not an optimizer checkpoint?)");
    const std::string& s = it->second;
    auto r = std::from_chars(s.data(), s.data() + s.size(), lr);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(lr) || lr < 0)
      throw IOError("safetensors file '" + path + "': metadata \"" + kOptimizerLrKey + "\" = \"" +
                    s + "\" is not a valid learning rate");
  });
  optimizer.set_lr(lr);
}

}  // namespace ember
