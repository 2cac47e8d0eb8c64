// `ember onnx run --profile` (onnx_profile.h): per-node kernel times of a model's fused graph.
#include "onnx_profile.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "ember/context.h"
#include "ember/error.h"
#include "ember/op_attribution.h"
#include "ember/profile.h"
#include "ember/support/atomic_file.h"
#include "viz/record_dirs.h"

namespace ember::app {
namespace {

using nlohmann::json;

json value_json(const std::string& name, const onnx::Value& v) {
  json j = {{"name", name}};
  if (v.is_tensor() && v.tensor().defined()) {
    j["dtype"] = dtype_name(v.tensor().dtype());
    j["shape"] = v.tensor().shape();
  } else {
    j["kind"] = v.kind_name();
  }
  return j;
}

// What the attributed run saw: each node's outputs, and each launch's program and nodes.
struct Attributed {
  std::vector<json> shapes;  // per node
  std::vector<uint64_t> programs;
  std::vector<std::string> names;
  std::vector<std::vector<int>> nodes;  // per launch
  NamedTensors outputs;
};

Attributed attributed_run(const onnx::Model& m, const NamedTensors& inputs) {
  Attributed a;
  a.shapes.assign(m.nodes().size(), json::array());
  clear_profile();
  OpAttribution attribution;
  const auto names = m.nodes();
  a.outputs = m.run(inputs, [&](int node, const std::vector<onnx::Value>& out) {
    std::vector<Tensor> tensors;
    for (size_t i = 0; i < out.size(); i++) {
      if (out[i].is_tensor() && out[i].tensor().defined()) tensors.push_back(out[i].tensor());
      if (i < names[node].outputs.size() && !names[node].outputs[i].empty())
        a.shapes[node].push_back(value_json(names[node].outputs[i], out[i]));
    }
    attribution.mark(node, tensors);
  });
  std::vector<Tensor> all;
  for (auto& [name, t] : a.outputs) all.push_back(t);
  realize(all);
  a.nodes = attribution.launches();
  for (const KernelEvent& e : profiled_kernels()) {
    a.programs.push_back(e.program);
    a.names.push_back(e.name);
  }
  return a;
}

// Mean seconds per launch position over `repeat` runs, and each run's wall time in ms.
std::vector<double> timed_runs(const onnx::Model& m, const NamedTensors& inputs, int repeat,
                               const std::vector<uint64_t>& programs, std::vector<double>& wall) {
  std::vector<double> seconds(programs.size(), 0.0);
  for (int r = 0; r < repeat; r++) {
    clear_profile();
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Tensor> all;
    for (auto& [name, t] : m.run(inputs)) all.push_back(t);
    realize(all);
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    const std::vector<KernelEvent> events = profiled_kernels();
    bool same = events.size() == programs.size();
    for (size_t i = 0; same && i < events.size(); i++) same = events[i].program == programs[i];
    if (!same)
      throw Error("--profile: timed run " + std::to_string(r + 1) + " launched " +
                  std::to_string(events.size()) + " kernels unlike the attributed run's " +
                  std::to_string(programs.size()) + ": its times cannot be attributed");
    for (size_t i = 0; i < events.size(); i++)
      seconds[i] += (events[i].end_s - events[i].start_s) / repeat;
  }
  return seconds;
}

// Nodes joined by kernels that fused their ops: the root of each node's set.
struct Groups {
  std::vector<int> parent;
  explicit Groups(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
  void join(int a, int b) { parent[find(a)] = find(b); }
};

// The record's nodes, groups and unattributed time from the per-launch nodes and seconds.
json attribute(const onnx::Model& m, const Attributed& a, const std::vector<double>& seconds) {
  const auto infos = m.nodes();
  Groups g(infos.size());
  for (const auto& ns : a.nodes)
    for (size_t i = 1; i < ns.size(); i++) g.join(ns[0], ns[i]);
  json nodes = json::array();
  for (size_t i = 0; i < infos.size(); i++)
    nodes.push_back({{"index", i},
                     {"name", infos[i].name},
                     {"op_type", infos[i].op_type},
                     {"inputs", infos[i].inputs},
                     {"outputs", infos[i].outputs},
                     {"shapes", a.shapes[i]},
                     {"seconds", 0.0},
                     {"launches", 0},
                     {"group", nullptr}});
  std::map<int, json> groups;  // by root
  double unattributed = 0;
  for (size_t l = 0; l < a.nodes.size(); l++) {
    const auto& ns = a.nodes[l];
    if (ns.empty()) {
      unattributed += seconds[l];
    } else if (ns.size() == 1) {
      nodes[ns[0]]["seconds"] = nodes[ns[0]]["seconds"].get<double>() + seconds[l];
      nodes[ns[0]]["launches"] = nodes[ns[0]]["launches"].get<int>() + 1;
    } else {
      json& grp = groups[g.find(ns[0])];
      if (grp.is_null()) grp = {{"seconds", 0.0}, {"launches", 0}, {"kernels", json::array()}};
      grp["seconds"] = grp["seconds"].get<double>() + seconds[l];
      grp["launches"] = grp["launches"].get<int>() + 1;
      if (std::find(grp["kernels"].begin(), grp["kernels"].end(), a.names[l]) ==
          grp["kernels"].end())
        grp["kernels"].push_back(a.names[l]);
    }
  }
  json launches = json::array();  // in launch order: the per-layer view (scripts/onnx_bench.py)
  for (size_t l = 0; l < a.nodes.size(); l++)
    launches.push_back({{"kernel", a.names[l]}, {"seconds", seconds[l]}, {"nodes", a.nodes[l]}});
  json out_groups = json::array();
  std::map<int, int> id_of;  // root -> group id, numbered by first node
  for (size_t i = 0; i < infos.size(); i++) {
    const int root = g.find(static_cast<int>(i));
    if (!groups.count(root)) continue;
    auto [it, fresh] = id_of.emplace(root, static_cast<int>(out_groups.size()));
    if (fresh) {
      json grp = groups[root];
      grp["id"] = it->second;
      grp["nodes"] = json::array();
      out_groups.push_back(grp);
    }
    out_groups[it->second]["nodes"].push_back(i);
    nodes[i]["group"] = it->second;
  }
  return {{"nodes", nodes},
          {"groups", out_groups},
          {"launches", launches},
          {"unattributed_s", unattributed}};
}

json values_json(const NamedTensors& values) {
  json r = json::array();
  for (const auto& [name, t] : values) r.push_back(value_json(name, onnx::Value(t)));
  return r;
}

}  // namespace

void check_profile_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (dir.empty()) throw ValueError("--profile needs a directory");
  std::error_code ec;
  const fs::path d(dir);
  if (fs::exists(d, ec)) {
    if (!fs::is_directory(d, ec))
      throw IOError("--profile " + dir + ": not a directory (name a new or empty folder)");
    for (const char* file : {viz::kOnnxProfileFile, "trace.json", "run.json"})
      if (fs::exists(d / file, ec))
        throw IOError("--profile " + dir + " already holds " + file +
                      (std::string(file) == "run.json" ? " (a training run's folder)" : "") +
                      ": name a new or empty folder (ember does not overwrite it)");
    return;
  }
  // The nearest existing folder above it must be a writable directory.
  fs::path up = fs::absolute(d, ec).parent_path();
  while (!up.empty() && !fs::exists(up, ec) && up != up.parent_path()) up = up.parent_path();
  if (!fs::is_directory(up, ec))
    throw IOError("--profile " + dir + " cannot be made: '" + up.string() + "' is not a directory");
  if (access(up.c_str(), W_OK | X_OK) != 0)
    throw IOError("--profile " + dir + " cannot be made in '" + up.string() +
                  "': " + std::strerror(errno));
}

NamedTensors profile_onnx_model(const onnx::Model& m, const std::string& model_path,
                                const NamedTensors& inputs, int repeat, const std::string& dir) {
  Context& ctx = Context::get();
  ctx.profile = true;
  const Attributed a = attributed_run(m, inputs);
  std::vector<double> wall;
  const std::vector<double> seconds = timed_runs(m, inputs, repeat, a.programs, wall);
  json rec = attribute(m, a, seconds);
  std::sort(wall.begin(), wall.end());
  rec["model"] = model_path;
  rec["producer"] = m.producer();
  rec["device"] = ctx.device;
  rec["threads"] = get_num_threads();
  rec["runs"] = repeat;
  rec["wall_ms"] = {{"median", wall[wall.size() / 2]}, {"min", wall.front()}};
  rec["kernel_s"] = std::accumulate(seconds.begin(), seconds.end(), 0.0);
  rec["inputs"] = values_json(inputs);
  rec["outputs"] = values_json(a.outputs);
  check_profile_dir(dir);  // again: another process may have written there while the model ran
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IOError("--profile " + dir + " cannot be made: " + ec.message());
  support::write_file_atomic((std::filesystem::path(dir) / viz::kOnnxProfileFile).string(),
                             rec.dump(1) + "\n");
  write_trace((std::filesystem::path(dir) / "trace.json").string());
  std::printf(
      "profile: %s (%zu nodes, %zu fused groups, %.4g ms of kernels per run over %d "
      "runs; ember viz --runs %s shows it)\n",
      (std::filesystem::path(dir) / viz::kOnnxProfileFile).c_str(), rec["nodes"].size(),
      rec["groups"].size(), rec["kernel_s"].get<double>() * 1e3, repeat, dir.c_str());
  return a.outputs;
}

}  // namespace ember::app
