#include "viz/confine.h"

#include <algorithm>

namespace ember::viz {

namespace fs = std::filesystem;

namespace {

// Whether `p` is `root` or below it, component by component (so /runs2 is not under /runs).
bool within(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q) {
    if (r->empty()) continue;  // a trailing separator
    if (q == p.end() || *r != *q) return false;
  }
  return true;
}

}  // namespace

Confined confine(const fs::path& root, std::string_view relative) {
  if (relative.empty() || relative.find('\0') != std::string_view::npos) return {};
  const fs::path rel(relative);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) return {};
  if (std::any_of(rel.begin(), rel.end(), [](const fs::path& c) { return c == ".."; })) return {};
  std::error_code ec;
  // weakly_canonical follows every symlink of the part that exists, so a link out of the folder
  // lands outside `root` here.
  const fs::path full = fs::weakly_canonical(root / rel, ec);
  if (ec || !within(root, full)) return {};
  if (!fs::exists(full, ec)) return {Confined::Status::NotFound, {}};
  return {Confined::Status::Ok, full};
}

}  // namespace ember::viz
