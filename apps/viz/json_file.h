// The JSON files `ember viz` reads from the runs folder (run.json, epochs.jsonl lines,
// trace.kernels.json, onnx-profile.json): every one is parsed here, after a depth check, so that
// a deeply nested file (nlohmann::json recurses on its values) is an error, not a crash.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace ember::viz {

/// Nesting deeper than this ([ and { inside each other) is refused before a json is built.
inline constexpr int kMaxJsonDepth = 256;

/// A parsed document, or why not: `error` is empty exactly when `value` holds the document.
struct JsonText {
  nlohmann::json value;
  std::string error;
  bool ok() const { return error.empty(); }
};

/// Parses `text` (named `what` in the error): an error when it nests deeper than kMaxJsonDepth
/// or is not JSON.
JsonText parse_json(const std::string& text, const std::string& what);

/// Reads and parses the file at `path` (its path is the name in the error); an error also when it
/// cannot be read.
JsonText read_json_file(const std::filesystem::path& path);

}  // namespace ember::viz
