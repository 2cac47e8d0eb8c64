// Finding the records `ember viz` serves under its runs folder.
#pragma once
#include <filesystem>
#include <vector>

namespace ember::viz {

/// The record `ember onnx run --profile DIR` writes into DIR (apps/onnx_profile.h).
inline constexpr const char* kOnnxProfileFile = "onnx-profile.json";

/// The directories under `root` (itself included, at most 3 levels down) that hold a regular
/// file named `file`, in directory order; not below one another unless `nested` (ONNX profiles
/// may be written inside another's folder; a run's folder holds no other run). Symlinks are not
/// followed (one out of the folder is not read, one inside would list a directory twice), nor are
/// checkpoint and profile folders searched.
std::vector<std::filesystem::path> record_dirs(const std::filesystem::path& root, const char* file,
                                               bool nested = false);

}  // namespace ember::viz
