// What `ember onnx run MODEL --profile DIR` writes (DIR/onnx-profile.json: apps/onnx_profile.h),
// as `ember viz` serves it (README, "ember viz"). Every path here is already confined.
#pragma once
#include <filesystem>

#include <nlohmann/json.hpp>

namespace ember::viz {

/// Every profiled model below `root` (at most 3 levels down, as record_dirs finds them), by id:
/// [{id (its folder relative to root), model, producer, device, threads, runs, nodes (count),
/// op_types (count per op type), groups (count), kernel_s, wall_ms}]. A profile inside another's
/// folder is listed too. A malformed one is listed as {id, error} (the file and what is wrong).
nlohmann::json list_onnx_profiles(const std::filesystem::path& root);

/// One folder's onnx-profile.json. Throws IOError naming the file when it is unreadable, not a
/// JSON object or nested deeper than kMaxJsonDepth (viz/json_file.h).
nlohmann::json onnx_profile(const std::filesystem::path& dir);

}  // namespace ember::viz
