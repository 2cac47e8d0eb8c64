#include "viz/onnx_records.h"

#include <algorithm>

#include "ember/error.h"
#include "viz/json_file.h"
#include "viz/record_dirs.h"

namespace ember::viz {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The list's entry for one profile; throws IOError or json's type errors when it is malformed.
json profile_entry(const fs::path& root, const fs::path& dir) {
  const json p = onnx_profile(dir);
  json op_types = json::object();
  for (const json& n : p.value("nodes", json::array()))
    op_types[n.value("op_type", "")] = op_types.value(n.value("op_type", ""), 0) + 1;
  json entry = {{"id", dir.lexically_relative(root).generic_string()},
                {"nodes", p.value("nodes", json::array()).size()},
                {"op_types", op_types},
                {"groups", p.value("groups", json::array()).size()}};
  for (const char* k : {"model", "producer", "device", "threads", "runs", "kernel_s", "wall_ms"})
    entry[k] = p.value(k, json());
  return entry;
}

}  // namespace

json onnx_profile(const fs::path& dir) {
  const fs::path file = dir / kOnnxProfileFile;
  JsonText j = read_json_file(file);
  if (!j.ok()) throw IOError(j.error);
  if (!j.value.is_object())
    throw IOError(file.string() + ": not a profile (a JSON " + j.value.type_name() +
                  ", not an object)");
  const json& p = j.value;
  // The fields the list and the page read: arrays of objects and numbers, where present.
  for (const char* k : {"nodes", "groups"}) {
    const bool ok = !p.contains(k) ||
                    (p[k].is_array() && std::all_of(p[k].begin(), p[k].end(),
                                                    [](const json& e) { return e.is_object(); }));
    if (!ok) throw IOError(file.string() + ": '" + k + "' is not an array of objects");
  }
  for (size_t i = 0; i < p.value("nodes", json::array()).size(); i++)
    if (p["nodes"][i].contains("op_type") && !p["nodes"][i]["op_type"].is_string())
      throw IOError(file.string() + ": node " + std::to_string(i) + "'s 'op_type' is not a string");
  for (const char* k : {"kernel_s", "unattributed_s", "threads", "runs"})
    if (p.contains(k) && !p[k].is_number())
      throw IOError(file.string() + ": '" + k + "' is not a number");
  return std::move(j.value);
}

json list_onnx_profiles(const fs::path& root) {
  json out = json::array();
  for (const fs::path& dir : record_dirs(root, kOnnxProfileFile, true)) {
    std::string error;
    try {
      out.push_back(profile_entry(root, dir));
    } catch (const IOError& e) {
      error = e.what();
    } catch (const json::exception& e) {  // a field of the wrong type
      error = (dir / kOnnxProfileFile).string() + ": a field of the wrong type (" + e.what() + ")";
    }
    if (!error.empty())
      out.push_back({{"id", dir.lexically_relative(root).generic_string()}, {"error", error}});
  }
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) { return a["id"] < b["id"]; });
  return out;
}

}  // namespace ember::viz
