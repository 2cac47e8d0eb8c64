// ember/support/atomic_file.h — whole-file writes that a crash or a kill cannot leave half done
// (part of the support floor: checkpoints, .npy and safetensors files, run records, traces and
// graph dumps all write through it).
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace ember::support {

/// Writes `parts`, in order, to a new temporary file next to `path` (".NAME.tmp-XXXXXX", mode
/// 0644), fsyncs it, renames it over `path` and fsyncs the directory: a reader, or the next run
/// after a kill -9 or a power cut, sees the old file or the new one, never a part.
/// Throws IOError(`error_prefix` + the step that failed + strerror); the temporary file is removed
/// on failure and a previous file at `path` is left as it was.
void write_file_atomic(const std::string& path, std::span<const std::string_view> parts,
                       const std::string& error_prefix);

/// The same for one piece.
void write_file_atomic(const std::string& path, std::string_view bytes,
                       const std::string& error_prefix);

/// The same for one piece, with the prefix "cannot write 'PATH': ".
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace ember::support
