#include "viz/run_records.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "viz/json_file.h"
#include "viz/record_dirs.h"

namespace ember::viz {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The JSON objects of a JSONL file, one per complete line.
std::vector<json> read_jsonl(const fs::path& p) {
  std::vector<json> out;
  std::ifstream f(p);
  std::string line;
  while (std::getline(f, line)) {
    if (f.eof()) break;  // no '\n' yet: a line being written
    JsonText j = parse_json(line, p.string());
    if (j.ok() && j.value.is_object()) out.push_back(std::move(j.value));
  }
  return out;
}

json run_entry(const fs::path& root, const fs::path& dir) {
  const JsonText read = read_json_file(dir / "run.json");
  const json& run = read.value;
  const auto field = [&](const char* k) { return run.is_object() ? run.value(k, json()) : json(); };
  const json prov = field("provenance");
  std::ifstream epochs(dir / "epochs.jsonl");
  const auto lines =
      std::count(std::istreambuf_iterator<char>(epochs), std::istreambuf_iterator<char>(), '\n');
  std::error_code ec;
  json entry = {{"id", dir.lexically_relative(root).generic_string()},
                {"started_at", prov.is_object() ? prov.value("started_at", json()) : json()},
                {"config", field("config")},
                {"provenance", prov},
                {"summary", field("summary")},
                {"epochs", lines},
                {"profile", fs::is_directory(dir / "profile", ec)}};
  if (!read.ok()) entry["error"] = read.error;
  return entry;
}

}  // namespace

json list_runs(const fs::path& root) {
  json runs = json::array();
  for (const fs::path& dir : record_dirs(root, "run.json")) runs.push_back(run_entry(root, dir));
  std::sort(runs.begin(), runs.end(), [](const json& a, const json& b) {
    const auto key = [](const json& r) {
      return r["started_at"].is_string() ? r["started_at"].get<std::string>() : std::string();
    };
    return key(a) != key(b) ? key(a) > key(b) : a["id"] < b["id"];
  });
  return runs;
}

json run_epochs(const fs::path& run_dir) {
  json rows = json::array();
  for (const json& r : read_jsonl(run_dir / "epochs.jsonl")) {
    json row;
    for (const char* k : {"epoch", "transitions", "eval_mean", "eval_std", "train_return_mean",
                          "collect_s", "update_s", "eval_s", "epoch_s"})
      row[k] = r.value(k, json());
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ember::viz
