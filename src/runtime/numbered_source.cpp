#include "runtime/numbered_source.h"

namespace ember::runtime {

std::string numbered_source(const std::string& src) {
  std::string out;
  int line = 1;
  size_t at = 0;
  while (at < src.size()) {
    size_t end = src.find('\n', at);
    if (end == std::string::npos) end = src.size();
    out += std::to_string(line++) + ": " + src.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return out;
}

}  // namespace ember::runtime
