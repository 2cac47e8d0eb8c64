// `ember onnx run` (apps/onnx_run.cpp): a model on .npy inputs, its outputs written as .npy, and
// with --repeat a latency measurement as onnxruntime_perf_test gives one.
#pragma once
#include <string>
#include <vector>

namespace ember::app {

struct OnnxRunOptions {
  std::string model, output_dir, device;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::vector<std::string> dims;    // NAME=V: a symbolic dimension's size for zero inputs
  int repeat = 0;                   // timed runs; 0: run once and write the outputs
  int threads = 0;                  // 0: EMBER_THREADS or all cores
  std::string profile_dir;          // --profile: per-node times into DIR (onnx_profile.h)
  bool profile = false;             // --profile was given (its DIR may be "", an error)
};

/// Runs the model. Without --repeat every input must be given (ValueError otherwise) and the
/// outputs go to output_dir (default "."). With --repeat N: inputs not given are zeros of their
/// declared shape (a symbolic dimension takes its --dim value, else 1; said on stderr), one warm-up
/// call and one capture under ember::jit (or plain calls when the model reads tensor data while
/// it runs, which a replay cannot), then N timed calls; prints their median and minimum latency,
/// and before them when the warm-up call's outputs were ready: the time since the start (the
/// model's load included) and the kernels compiled by then, by the compiler or from the disk cache
/// (the start-up a user waits for, cold or warm kernel cache).
/// Outputs are written only when output_dir is given. A --input or --dim name the model does not
/// have, a bad NAME=VALUE, or an input with no declared shape left to zeros: ValueError.
/// With --profile DIR: inputs as for --repeat, then profile_onnx_model with --repeat's N timed
/// runs (default 5) instead of the latency measurement.
void run_onnx_model(const OnnxRunOptions& o);

}  // namespace ember::app
