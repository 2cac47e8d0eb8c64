#include "viz/record_dirs.h"

#include <string>

namespace ember::viz {

namespace fs = std::filesystem;

std::vector<fs::path> record_dirs(const fs::path& root, const char* file, bool nested) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (fs::is_regular_file(root / file, ec)) out.push_back(root);
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it.depth() >= 3 || it->is_symlink(ec) || !it->is_directory(ec)) {
      if (it.depth() >= 3) it.disable_recursion_pending();
      continue;
    }
    const std::string name = it->path().filename().string();
    if (name == "checkpoints" || name == "profile") {
      it.disable_recursion_pending();
      continue;
    }
    if (fs::is_regular_file(it->path() / file, ec)) {
      out.push_back(it->path());
      if (!nested) it.disable_recursion_pending();
    }
  }
  return out;
}

}  // namespace ember::viz
