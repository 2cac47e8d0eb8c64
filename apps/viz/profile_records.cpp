#include "viz/profile_records.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "ember/error.h"
#include "ember/support/process.h"
#include "ember/support/read_file.h"
#include "viz/json_file.h"

namespace ember::viz {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

// Graphviz's dot on PATH ("" when absent).
std::string dot_program() {
  const char* env = std::getenv("PATH");
  std::istringstream dirs(env ? env : "/usr/bin:/bin");
  std::string d;
  while (std::getline(dirs, d, ':'))
    if (!d.empty() && access((d + "/dot").c_str(), X_OK) == 0) return d + "/dot";
  return std::string();
}

}  // namespace

json run_kernels(const fs::path& run_dir) {
  const fs::path file = run_dir / "profile" / "trace.kernels.json";
  std::error_code ec;
  if (!fs::exists(file, ec)) return nullptr;
  JsonText j = read_json_file(file);
  if (!j.ok()) throw IOError(j.error);
  return std::move(j.value);
}

json run_graphs(const fs::path& run_dir) {
  json out = json::array();
  std::error_code ec;
  const std::string suffix = ".fused.dot";
  for (const auto& e : fs::directory_iterator(run_dir / "profile" / "graphs", ec)) {
    const std::string file = e.path().filename().string();
    if (file.size() <= suffix.size() || !file.ends_with(suffix)) continue;
    const std::string name = file.substr(0, file.size() - suffix.size());
    if (!valid_graph(name, "fused")) continue;
    const std::string text = support::read_file(e.path().string());
    out.push_back({{"name", name},
                   {"kernels", count(text, "subgraph cluster_")},
                   {"ops", count(text, "[label=")}});
  }
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return a["kernels"] != b["kernels"] ? a["kernels"] > b["kernels"] : a["name"] < b["name"];
  });
  return out;
}

bool valid_graph(const std::string& name, const std::string& kind) {
  static const std::regex pattern("realize-[0-9]{1,9}");
  return std::regex_match(name, pattern) && (kind == "ops" || kind == "kernels" || kind == "fused");
}

bool have_dot() { return !dot_program().empty(); }

Rendered render_svg(const fs::path& dot_file) {
  const std::string dot = dot_program();
  if (dot.empty()) return {"", "Graphviz's dot is not installed (not on PATH)", false};
  const std::vector<std::string> argv = {dot, "-Tsvg", dot_file.string()};
  const support::ProcessResult r = support::run_process(argv, 64 << 20, true);
  if (r.ok() && r.output.find("<svg") != std::string::npos) return {r.output, ""};
  // Again with dot's stderr, for its reason (kept out of a drawing, which warnings would spoil).
  const support::ProcessResult again = support::run_process(argv, 4096, false);
  std::string why = again.output.substr(0, 400);
  if (why.empty()) why = "exit status " + std::to_string(r.status);
  while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
  return {"", dot + " -Tsvg failed" + (why.empty() ? std::string() : ": " + why)};
}

}  // namespace ember::viz
