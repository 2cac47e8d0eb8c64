// `ember onnx run` (onnx_run.h): inputs from .npy files or zeros, one run or N timed ones.
#include "onnx_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "commands.h"
#include "ember/context.h"
#include "ember/io/npy.h"
#include "ember/jit.h"
#include "ember/onnx/model.h"
#include "onnx_profile.h"
#include "onnx_test.h"

namespace ember::app {
namespace {

// NAME=VALUE, both parts non-empty.
std::pair<std::string, std::string> split_pair(const std::string& spec, const char* option,
                                               const char* value) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw ValueError(std::string(option) + " expects NAME=" + value + ", got '" + spec + "'");
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

// --dim NAME=V, each name a symbolic dimension of some input.
std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs,
                                          const onnx::Model& m) {
  std::map<std::string, int64_t> out;
  for (const auto& spec : specs) {
    auto [name, text] = split_pair(spec, "--dim", "SIZE");
    bool known = false;
    for (const auto& v : m.inputs())
      for (const auto& d : v.shape.value_or(std::vector<onnx::Dim>{}))
        known = known || d.param == name;
    if (!known)
      throw ValueError("--dim " + spec + ": the model has no dimension named '" + name + "'");
    size_t used = 0;
    int64_t size = -1;
    try {
      size = std::stoll(text, &used);
    } catch (const std::exception&) {
    }
    if (used != text.size() || size < 0)
      throw ValueError("--dim " + spec + ": the size must be a non-negative integer");
    out[name] = size;
  }
  return out;
}

// Zeros of an input's declared shape; its symbolic dimensions from `dims`, else 1.
Tensor zero_input(const onnx::ValueInfo& v, const std::map<std::string, int64_t>& dims) {
  if (!v.dtype || !v.shape)
    throw ValueError("input '" + v.name + "' (" + v.type + ", " +
                     (v.shape ? "" : "no declared shape") +
                     ") cannot be zeros: give it with --input " + v.name + "=FILE.npy");
  std::vector<int64_t> shape;
  std::string said;
  for (const auto& d : *v.shape) {
    if (d.value) {
      shape.push_back(*d.value);
      continue;
    }
    auto it = dims.find(d.param);
    shape.push_back(it == dims.end() ? 1 : it->second);
    if (it == dims.end())
      said += " " + (d.param.empty() ? std::string("an unnamed dimension") : d.param) + " = 1";
  }
  Tensor t = zeros(shape, *v.dtype);
  t.realize();  // a buffer, as a file would give: a lazy constant would fold into the graph
  std::fprintf(stderr, "input '%s' not given: zeros of %s %s%s%s\n", v.name.c_str(),
               dtype_name(t.dtype()), support_shape(t).c_str(), said.empty() ? "" : " (",
               said.empty() ? "" : (said.substr(1) + ")").c_str());
  return t;
}

NamedTensors gather_inputs(const OnnxRunOptions& o, const onnx::Model& m) {
  NamedTensors given;
  for (const auto& spec : o.inputs) {
    auto [name, file] = split_pair(spec, "--input", "FILE.npy");
    given.emplace_back(name, load_npy(file));
  }
  if (o.repeat == 0 && !o.profile) return given;  // a plain run: the model's error
  const auto dims = parse_dims(o.dims, m);
  for (const auto& v : m.inputs()) {
    const bool have =
        std::any_of(given.begin(), given.end(), [&](const auto& g) { return g.first == v.name; });
    if (!have && !v.has_default) given.emplace_back(v.name, zero_input(v, dims));
  }
  return given;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The start-up line: from run_onnx_model's start (`t0`, runtime stats `s0`) to the first outputs,
// the load of the model (`load_ms`) and the kernels compiled on the way (scripts/onnx_bench.py
// reads it for its compile-time rows).
void print_first_run(std::chrono::steady_clock::time_point t0, double load_ms,
                     const RuntimeStats& s0) {
  const RuntimeStats s = runtime_stats_snapshot();
  std::printf(
      "first outputs: %.1f ms after start (model load %.1f ms); %lld kernels compiled (%lld by the "
      "compiler, %lld from the disk cache) in %.1f ms, %lld compiler processes\n",
      ms_since(t0), load_ms, static_cast<long long>(s.kernels_compiled - s0.kernels_compiled),
      static_cast<long long>(s.kernels_from_compiler - s0.kernels_from_compiler),
      static_cast<long long>(s.kernels_from_disk_cache - s0.kernels_from_disk_cache),
      (s.compile_seconds - s0.compile_seconds) * 1e3,
      static_cast<long long>(s.compiler_runs - s0.compiler_runs));
}

// One warm-up call (its end printed by print_first_run) and a capture under jit, then o.repeat
// timed calls; the last call's outputs.
NamedTensors timed_runs(const OnnxRunOptions& o, const onnx::Model& m, const NamedTensors& in,
                        const std::function<void()>& first_outputs) {
  std::vector<Tensor> args;
  for (const auto& [name, t] : in) args.push_back(t);
  std::vector<std::string> names;  // the outputs' (host data only: a capture keeps no tensor)
  auto eager = [&](const std::vector<Tensor>& a) {
    NamedTensors named;
    for (size_t i = 0; i < a.size(); i++) named.emplace_back(in[i].first, a[i]);
    names.clear();
    std::vector<Tensor> r;
    for (auto& [name, t] : m.run(named)) {
      names.push_back(name);
      r.push_back(t);
    }
    return r;
  };
  Jit jitted(eager);
  std::function<std::vector<Tensor>()> call = [&] { return jitted(args); };
  realize(jitted(args));  // a plain run: the model's own errors surface here
  first_outputs();
  const char* mode = "ember::jit replays";
  try {
    realize(jitted(args));  // the capture
  } catch (const Error& e) {
    std::fprintf(stderr, "the model cannot be replayed (%s): timing plain calls\n", e.what());
    call = [&] { return eager(args); };
    mode = "plain calls";
    realize(call());
  }
  std::vector<double> ms;
  std::vector<Tensor> last;
  for (int i = 0; i < o.repeat; i++) {
    const auto t0 = std::chrono::steady_clock::now();
    last = call();
    realize(last);
    ms.push_back(ms_since(t0));
  }
  std::printf("%s: %d runs (%s, %d threads): median %.3f ms, min %.3f ms\n", o.model.c_str(),
              o.repeat, mode, get_num_threads(), median_of(ms),
              *std::min_element(ms.begin(), ms.end()));
  NamedTensors result;
  for (size_t i = 0; i < last.size(); i++) result.emplace_back(names[i], last[i]);
  return result;
}

void write_outputs(const NamedTensors& out, const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (auto& [name, t] : out) {
    if (name.find('/') != std::string::npos || name == "." || name == ".." || name.empty())
      throw ValueError("output name '" + name + "' cannot be a file name");
    const std::string file = (std::filesystem::path(dir) / (name + ".npy")).string();
    save_npy(t, file);
    std::printf("%s: %s %s -> %s\n", name.c_str(), dtype_name(t.dtype()), support_shape(t).c_str(),
                file.c_str());
  }
}

}  // namespace

void run_onnx_model(const OnnxRunOptions& o) {
  if (!o.device.empty()) Context::get().device = o.device;
  if (o.threads > 0) set_num_threads(o.threads);
  if (!o.dims.empty() && o.repeat == 0 && !o.profile)
    throw ValueError("--dim sizes the zero inputs of --repeat; give every input with --input");
  if (o.profile) check_profile_dir(o.profile_dir);
  const auto t0 = std::chrono::steady_clock::now();
  const RuntimeStats s0 = runtime_stats_snapshot();
  const onnx::Model m = onnx::load(o.model);
  const double load_ms = ms_since(t0);
  const NamedTensors in = gather_inputs(o, m);
  if (o.profile) {
    const NamedTensors out =
        profile_onnx_model(m, o.model, in, o.repeat > 0 ? o.repeat : 5, o.profile_dir);
    if (!o.output_dir.empty()) write_outputs(out, o.output_dir);
    return;
  }
  if (o.repeat > 0) {
    const NamedTensors out = timed_runs(o, m, in, [&] { print_first_run(t0, load_ms, s0); });
    if (!o.output_dir.empty()) write_outputs(out, o.output_dir);
    return;
  }
  NamedTensors out = m.run(in);
  std::vector<Tensor> all;
  for (auto& [name, t] : out) all.push_back(t);
  realize(all);
  write_outputs(out, o.output_dir.empty() ? "." : o.output_dir);
}

}  // namespace ember::app
