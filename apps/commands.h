// One registration function per `ember` subcommand, each defined in its own apps/cmd_<name>.cpp.
// A command adds its subcommand, options and callback to the app; the callback does the work and
// throws std::exception on failure (main prints it and exits non-zero).
// To add one: declare it here, write apps/cmd_<name>.cpp, list it in apps/CMakeLists.txt and
// call it from apps/main.cpp.
#pragma once

namespace CLI {
class App;
}

namespace ember::app {

/// Thrown by a command to make `ember` exit with `code` (e.g. 130 after a SIGINT was handled).
struct ExitStatus {
  int code;
};

void add_env_command(CLI::App& app);  // ember env: run LunarLander episodes with a fixed policy
// ember inspect: list a safetensors file's tensors (name, dtype, shape, min, max, mean)
void add_inspect_command(CLI::App& app);
void add_train_command(CLI::App& app);  // ember train: PPO on LunarLander (docs/training.md)
void add_eval_command(CLI::App& app);   // ember eval: evaluate a saved policy
// ember tune --list|--clear: the schedule search's cache
void add_tune_command(CLI::App& app);
// ember onnx run|test|info: ONNX models (only when the ONNX frontend is built)
void add_onnx_command(CLI::App& app);
// ember viz: a local web page over the runs' records, kernels, graphs and traces (only when
// cpp-httplib is found)
void add_viz_command(CLI::App& app);

}  // namespace ember::app
