// Atomic file writes for io's formats: a reader never sees a partial file, and a failed write
// leaves any previous file intact.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ember::io_detail {

/// Writes the pieces, in order, to a new temporary file next to `path`, fsyncs it, renames it over
/// `path` and fsyncs the directory. Throws IOError(`error_prefix` + reason); the temporary file is
/// removed on failure.
void write_atomic(const std::string& path, const std::vector<std::pair<const char*, size_t>>& parts,
                  const std::string& error_prefix);

}  // namespace ember::io_detail
