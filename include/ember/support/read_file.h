// ember/support/read_file.h — a whole file's bytes (part of the support floor: run records,
// traces and graph dumps are read back through it; atomic_file.h writes them).
#pragma once
#include <string>

namespace ember::support {

/// The bytes of the file at `path`. Throws IOError naming the file: "cannot open" with strerror's
/// reason, "it is a directory", or "cannot read" when reading fails.
std::string read_file(const std::string& path);

}  // namespace ember::support
