// `ember inspect FILE`: lists the tensors of a safetensors file (a checkpoint written by ember or
// by any safetensors tool): name, dtype, shape, min, max and mean, plus the file's metadata. A
// malformed file makes the command fail with a one-line reason (ember::IOError).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "ember/serialize.h"

namespace ember::app {
namespace {

std::string shape_text(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); i++) {
    if (i) r += ", ";
    r += std::to_string(s[i]);
  }
  return r + "]";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

struct Row {
  std::string name, dtype, shape, min = "-", max = "-", mean = "-";
};

// Min and max ignore NaNs (a tensor of only NaNs reports nan); the mean includes them.
Row describe(const std::string& name, const Tensor& t) {
  Row r{name, safetensors_dtype(t.dtype()), shape_text(t.sizes())};
  if (t.numel() == 0) return r;
  const std::vector<double> v = t.to_vector<double>();  // realized buffer: no kernel runs
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  bool any = false;
  for (double x : v) {
    sum += x;
    if (std::isnan(x)) continue;
    lo = std::min(lo, x), hi = std::max(hi, x), any = true;
  }
  if (!any) lo = hi = std::numeric_limits<double>::quiet_NaN();
  r.min = number(lo), r.max = number(hi), r.mean = number(sum / static_cast<double>(v.size()));
  return r;
}

void run_inspect(const std::string& path) {
  const TensorFile f = load_file(path);
  int64_t elements = 0, bytes = 0;
  std::vector<Row> rows{{"NAME", "DTYPE", "SHAPE", "MIN", "MAX", "MEAN"}};
  for (auto& [name, t] : f.tensors) {
    elements += t.numel();
    bytes += t.numel() * static_cast<int64_t>(element_size(t.dtype()));
    rows.push_back(describe(name, t));
  }
  std::printf("%s: %zu tensors, %lld elements, %lld data bytes\n", path.c_str(), f.tensors.size(),
              static_cast<long long>(elements), static_cast<long long>(bytes));
  for (auto& [k, v] : f.metadata) std::printf("metadata %s = %s\n", k.c_str(), v.c_str());
  if (f.tensors.empty()) return;
  size_t w[6] = {0, 0, 0, 0, 0, 0};
  for (auto& r : rows) {
    const std::string* c[6] = {&r.name, &r.dtype, &r.shape, &r.min, &r.max, &r.mean};
    for (int i = 0; i < 6; i++) w[i] = std::max(w[i], c[i]->size());
  }
  for (auto& r : rows)
    std::printf("%-*s  %-*s  %-*s  %*s  %*s  %*s\n", int(w[0]), r.name.c_str(), int(w[1]),
                r.dtype.c_str(), int(w[2]), r.shape.c_str(), int(w[3]), r.min.c_str(), int(w[4]),
                r.max.c_str(), int(w[5]), r.mean.c_str());
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "inspect", "List a safetensors file's tensors (name, dtype, shape, min, max, mean)");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "The .safetensors file")->required();
  cmd->callback([path] { run_inspect(*path); });
}

}  // namespace ember::app
