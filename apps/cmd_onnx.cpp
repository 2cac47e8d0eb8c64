// `ember onnx`: run an ONNX model on .npy inputs (`run`), check it against an ONNX backend test
// folder (`test`, apps/onnx_test.cpp), or describe it (`info`).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "ember/context.h"
#include "ember/io/npy.h"
#include "ember/onnx/model.h"
#include "onnx_run.h"
#include "onnx_test.h"
#include "option_rules.h"

namespace ember::app {
namespace {

std::string dims_text(const onnx::ValueInfo& v) {
  if (!v.shape) return "(any shape)";
  std::string r = "[";
  for (size_t i = 0; i < v.shape->size(); i++) {
    const auto& d = (*v.shape)[i];
    r += i ? ", " : "";
    r += d.value ? std::to_string(*d.value) : d.param.empty() ? "?" : d.param;
  }
  return r + "]";
}

void run_info(const std::string& path) {
  const onnx::Model m = onnx::load(path);
  std::printf("%s: IR version %lld, producer %s\n", path.c_str(),
              static_cast<long long>(m.ir_version()),
              m.producer().empty() ? "(none)" : m.producer().c_str());
  std::printf("opsets:");
  for (const auto& [domain, v] : m.opsets())
    std::printf(" %s %lld", domain.c_str(), static_cast<long long>(v));
  std::printf("\ninputs:\n");
  for (const auto& v : m.inputs())
    std::printf("  %s: %s %s%s\n", v.name.c_str(), v.type.c_str(), dims_text(v).c_str(),
                v.has_default ? " (has a default)" : "");
  std::printf("outputs:\n");
  for (const auto& v : m.outputs())
    std::printf("  %s: %s %s\n", v.name.c_str(), v.type.c_str(), dims_text(v).c_str());
  int64_t total = 0;
  for (const auto& [op, n] : m.op_counts()) total += n;
  std::printf("ops: %lld nodes\n", static_cast<long long>(total));
  const auto missing = m.unsupported_ops();
  for (const auto& [op, n] : m.op_counts()) {
    const bool lacks = std::find(missing.begin(), missing.end(), op) != missing.end();
    std::printf("  %-28s %6lld%s\n", op.c_str(), static_cast<long long>(n),
                lacks ? "  (ember lacks it)" : "");
  }
  if (missing.empty()) {
    std::printf("ember has every op of the model\n");
  } else {
    std::printf("ember lacks:");
    for (const auto& op : missing) std::printf(" %s", op.c_str());
    std::printf("\n");
  }
}

}  // namespace

std::string support_shape(const Tensor& t) {
  std::string r = "[";
  for (int64_t i = 0; i < t.dim(); i++) r += (i ? ", " : "") + std::to_string(t.sizes()[i]);
  return r + "]";
}

void add_onnx_command(CLI::App& app) {
  CLI::App* onnx = app.add_subcommand("onnx", "Run, test and describe ONNX models");
  onnx->require_subcommand(1);

  auto ro = std::make_shared<OnnxRunOptions>();
  CLI::App* run = onnx->add_subcommand(
      "run",
      "Run a model on .npy inputs and write each output as DIR/NAME.npy; with --repeat N, time N "
      "runs after a warm-up (median and minimum latency)");
  run->add_option("model", ro->model, "The .onnx file")->required();
  run->add_option("--input", ro->inputs, "An input as NAME=FILE.npy (repeatable)");
  run->add_option("--output-dir", ro->output_dir,
                  "Where the outputs are written (default: . without --repeat; with it, none)");
  run->add_option("--device", ro->device,
                  "cpu, interp, opencl or cuda (default: EMBER_DEVICE, else cpu)")
      ->check(rule::one_of({"cpu", "interp", "opencl", "cuda"}));
  run->add_option("--repeat", ro->repeat,
                  "Timed runs after one warm-up and one ember::jit capture; inputs not given are "
                  "zeros of their declared shape")
      ->check(rule::positive());
  run->add_option("--dim", ro->dims,
                  "A symbolic dimension's size for the zero inputs of --repeat, as NAME=SIZE "
                  "(repeatable; default 1)");
  CLI::Option* profile = run->add_option(
      "--profile", ro->profile_dir,
      "Time each node's kernels (plain calls: one attributed run, then --repeat runs, "
      "default 5) and write DIR/onnx-profile.json and DIR/trace.json for ember viz; "
      "a kernel that fused several nodes counts for their group, unsplit");
  run->add_option("--threads", ro->threads,
                  "Threads of the kernel pool (default: EMBER_THREADS, "
                  "else all cores)")
      ->check(rule::positive());
  run->callback([ro, profile] {
    ro->profile = profile->count() > 0;
    run_onnx_model(*ro);
  });

  auto to = std::make_shared<OnnxTestOptions>();
  CLI::App* test = onnx->add_subcommand(
      "test",
      "Run one ONNX backend test folder (model.onnx, test_data_set_*/input_*.pb and output_*.pb) "
      "and compare with rtol 1e-3, atol 1e-7. Exit status: 0 match, 1 mismatch, 2 the model "
      "needs something ember lacks, 3 another error");
  test->add_option("dir", to->dir, "The test folder")->required();
  test->add_option("--device", to->device,
                   "cpu, interp, opencl or cuda (default: EMBER_DEVICE, else cpu)")
      ->check(rule::one_of({"cpu", "interp", "opencl", "cuda"}));
  test->add_option("--rtol", to->rtol, "Relative tolerance (default 1e-3)")
      ->check(rule::non_negative());
  test->add_option("--atol", to->atol, "Absolute tolerance (default 1e-7)")
      ->check(rule::non_negative());
  test->callback([to] {
    const int code = run_onnx_test(*to);
    if (code != 0) throw ExitStatus{code};
  });

  auto path = std::make_shared<std::string>();
  CLI::App* info = onnx->add_subcommand(
      "info", "List a model's inputs, outputs, opsets and op counts, and the ops ember lacks");
  info->add_option("model", *path, "The .onnx file")->required();
  info->callback([path] { run_info(*path); });
}

}  // namespace ember::app
