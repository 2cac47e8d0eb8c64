// ember/support/shape_str.h — the one shape printer, "[2, 3]" ("[]" for a 0-d shape), used by every
// error message and debug line that names a shape (part of the support floor under every layer:
// header-only, no dependencies).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ember::support {

inline std::string shape_str(const std::vector<int64_t>& shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); i++) {
    if (i) r += ", ";
    r += std::to_string(shape[i]);
  }
  r += "]";
  return r;
}

}  // namespace ember::support
