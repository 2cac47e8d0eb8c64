// ember/support/shape_str.h — the shape printers: "[2, 3]" ("[]" for a 0-d shape) for every error
// message and debug line that names a shape, and "2x3" for kernel and product names (part of the
// support floor under every layer: header-only, no dependencies).
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace ember::support {

inline std::string shape_str(std::span<const int64_t> shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); i++) {
    if (i) r += ", ";
    r += std::to_string(shape[i]);
  }
  r += "]";
  return r;
}

/// "2x3" ("" for a 0-d shape). Appends piece by piece: `(i ? "x" : "") + std::to_string(d)` makes
/// GCC 12 report a false -Wrestrict overlap (GCC bug 105329).
inline std::string dims_str(std::span<const int64_t> shape) {
  std::string r;
  for (size_t i = 0; i < shape.size(); i++) {
    if (i) r += 'x';
    r += std::to_string(shape[i]);
  }
  return r;
}

}  // namespace ember::support
