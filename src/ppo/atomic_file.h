// Internal: whole-file writes that a crash or a kill cannot leave half done.
#pragma once
#include <string>
#include <string_view>

namespace ember::rl {

/// Writes `bytes` to a new temporary file next to `path` (mkstemp), fsyncs it, renames it over
/// `path` and fsyncs the directory: a reader, or the next run after a kill -9 or a power cut, sees
/// the old file or the new one, never a part. Throws IOError naming the path; the temporary file is
/// removed on failure.
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace ember::rl
