#include "viz/onnx_records.h"

#include <algorithm>
#include <fstream>

#include "viz/record_dirs.h"

namespace ember::viz {

namespace fs = std::filesystem;
using nlohmann::json;

json onnx_profile(const fs::path& dir) {
  std::ifstream f(dir / kOnnxProfileFile);
  if (!f) return nullptr;
  json j = json::parse(f, nullptr, false);
  return j.is_object() ? j : json(nullptr);
}

json list_onnx_profiles(const fs::path& root) {
  json out = json::array();
  for (const fs::path& dir : record_dirs(root, kOnnxProfileFile)) {
    const json p = onnx_profile(dir);
    if (p.is_null()) continue;
    json op_types = json::object();
    for (const json& n : p.value("nodes", json::array()))
      op_types[n.value("op_type", "")] = op_types.value(n.value("op_type", ""), 0) + 1;
    json entry = {{"id", dir.lexically_relative(root).generic_string()},
                  {"nodes", p.value("nodes", json::array()).size()},
                  {"op_types", op_types},
                  {"groups", p.value("groups", json::array()).size()}};
    for (const char* k : {"model", "producer", "device", "threads", "runs", "kernel_s", "wall_ms"})
      entry[k] = p.value(k, json());
    out.push_back(std::move(entry));
  }
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) { return a["id"] < b["id"]; });
  return out;
}

}  // namespace ember::viz
