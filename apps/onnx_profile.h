// `ember onnx run MODEL --profile DIR` (apps/onnx_profile.cpp): the model's graph and its per-node
// kernel times, written as DIR/onnx-profile.json for `ember viz` (README, "ember viz", ONNX).
#pragma once
#include <string>

#include "ember/onnx/model.h"

namespace ember::app {

/// Runs `m` on `inputs` plainly (no jit) with the profile on: one attributed run, which builds the
/// graph node by node and logs which kernels compute which nodes (ember::OpAttribution), then
/// `repeat` timed runs of the same kernels. Writes <dir>/onnx-profile.json:
///   {model, producer, device, threads, runs, wall_ms: {median, min}, kernel_s (all launches of
///    one run, mean over runs), unattributed_s, inputs, outputs: [{name, dtype, shape}],
///    nodes: [{index, name, op_type, inputs, outputs, shapes: [{name, dtype, shape}], seconds,
///             launches, group}],
///    groups: [{id, nodes, seconds, launches, kernels}],
///    launches: [{kernel, seconds, nodes}] (each launch of a run, in order, with the nodes whose
///               ops its kernel computes)}
/// Times are seconds per run (mean over the timed runs). A node's `seconds` are the launches
/// that compute its ops and no other node's; a launch whose kernel fused the ops of several nodes
/// counts once, in the `group` of those nodes (connected by such kernels), never split among them.
/// `unattributed_s`: launches that compute no node's ops (copies of inputs). Also writes the
/// trace as <dir>/trace.json. Throws Error when the timed runs launch other kernels than the
/// attributed one, IOError when the folder cannot be written.
/// Returns the attributed run's outputs.
/// Refuses, before the model runs, a --profile DIR that the profile would overwrite or cannot be
/// written in: "" (ValueError), a DIR that holds onnx-profile.json or trace.json, or run.json (a
/// training run's folder, whose profile/trace.json ember train wrote), and one that is not a
/// directory or cannot be made (IOError, saying why).
void check_profile_dir(const std::string& dir);

NamedTensors profile_onnx_model(const onnx::Model& m, const std::string& model_path,
                                const NamedTensors& inputs, int repeat, const std::string& dir);

}  // namespace ember::app
