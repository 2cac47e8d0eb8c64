// Confining the paths a browser names to the folder `ember viz` serves.
#pragma once
#include <filesystem>
#include <string_view>

namespace ember::viz {

/// What confine() made of a path from a request.
struct Confined {
  enum class Status { Ok, Forbidden, NotFound };
  Status status = Status::Forbidden;
  std::filesystem::path path;  ///< the canonical path when Ok
};

/// Resolves `relative` (a path from a request, already URL-decoded once) under `root` (a canonical
/// directory). Forbidden: an empty path, an absolute one, a NUL byte, a ".." component, or one
/// that resolves (symlinks followed) outside `root`; NotFound: no such file. A path inside `root`
/// through a symlink that stays inside is Ok.
Confined confine(const std::filesystem::path& root, std::string_view relative);

}  // namespace ember::viz
