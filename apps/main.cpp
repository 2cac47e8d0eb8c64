// The `ember` command line: subcommands are registered from apps/commands.h.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "build_info.h"
#include "commands.h"
#include "ember/build_info.h"
#include "ember/context.h"
#include "ember/dist.h"
#include "ember/support/settings.h"
#include "option_rules.h"
#include "parse_errors.h"

namespace {

constexpr int kUsageError = 2;  // a command line ember cannot run (README, "Exit status")

// The environment switches every subcommand honours (README, "Seeing what runs").
constexpr const char* kEnvironmentHelp =
    "Environment:\n"
    "  DEBUG=1..4           1: one line per realize (kernels, cache hits, compile time);\n"
    "                       2: one line per kernel (time, GFLOPS, GB/s); 3: optimisations;\n"
    "                       4: generated C source\n"
    "  EMBER_THREADS=N      thread-pool size, kernels and env steps (default: all cores)\n"
    "  EMBER_DEVICE=interp  run kernels on the reference interpreter, or on OpenCL or a\n"
    "                       CUDA GPU with EMBER_DEVICE=opencl or cuda (default: cpu)\n"
    "  EMBER_CACHE_DIR=DIR  compiled-kernel cache (default: $XDG_CACHE_HOME/ember or\n"
    "                       ~/.cache/ember)\n"
    "  EMBER_CC=PATH        C compiler for kernels (default: cc, gcc or clang on PATH)\n"
    "  EMBER_ISA=LEVEL      generate kernels for avx512, avx2, sse2 or scalar (at most the\n"
    "                       CPU's own level; default: the CPU's best)\n"
    "  PROFILE=1            write a Chrome/Perfetto trace of every kernel launch and of the\n"
    "                       trainer's phases at exit, to $EMBER_PROFILE_FILE (default:\n"
    "                       ember-trace-<pid>.json)\n"
    "  BEAM=N               search each kernel's plan (a beam of N) at its first launch and\n"
    "                       keep it in the tune cache (ember tune --list); EMBER_BEAM_RUNS=N\n"
    "                       timed samples per candidate (default 5)\n"
    "  GRAPH=1              write the op graph and kernel graph of each realize as Graphviz\n"
    "                       files into $EMBER_GRAPH_DIR (default: ember-graph)\n";

// The `--version` lines of one kind of device: a heading, then its list (from ember's query),
// one line each; `none` where the list is empty; `error_prefix` and the reason where the query
// throws (the device is unavailable).
std::string device_list_text(std::vector<std::string> (*list)(), const std::string& heading,
                             const std::string& none, const std::string& error_prefix) {
  try {
    const std::vector<std::string> items = list();
    if (items.empty()) return heading + " " + none;
    std::string t = heading;
    for (const std::string& item : items) t += "\n  " + item;
    return t;
  } catch (const std::exception& e) {
    return error_prefix + e.what();
  }
}

std::string version_text() {
  std::string t;
  try {
    t = ember::kernel_target();
  } catch (const std::exception& e) {
    t = std::string("unavailable: ") + e.what();
  }
  return std::string("ember ") + EMBER_VERSION + " (revision " + EMBER_BUILD_REVISION +
         ")\nkernel target: " + t + "\n" +
         device_list_text(ember::opencl_platforms,
                          "opencl platforms:", "none found (no OpenCL driver installed)",
                          "opencl platforms: unavailable: ") +
         "\n" +
         // cuda_devices() throws "the cuda device is unavailable: ...".
         device_list_text(ember::cuda_devices, "cuda devices:", "none found", "cuda: ");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ember: a lazy, fusing tensor library and the PPO agent that trains with it",
               "ember"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text,
                       "Print the version, source revision and kernel target, then exit");
  app.footer(kEnvironmentHelp);
  app.failure_message(ember::app::describe_parse_error);
  // --help lists the subcommands in this order: the main job first.
  ember::app::add_train_command(app);
  ember::app::add_eval_command(app);
  ember::app::add_env_command(app);
  ember::app::add_inspect_command(app);
  ember::app::add_tune_command(app);
#ifdef EMBER_HAVE_ONNX
  ember::app::add_onnx_command(app);
#endif
#ifdef EMBER_HAVE_VIZ
  ember::app::add_viz_command(app);
#endif
  ember::app::rule::refuse_negative_unsigned(app);
  for (CLI::App* sub : app.get_subcommands({}))
    sub->footer(sub->get_footer() + "\n" + kEnvironmentHelp);

  // A malformed setting (DEBUG, EMBER_THREADS, EMBER_ISA, ...) is refused before any
  // subcommand's work, whatever the subcommand. It runs once the command line is parsed, so
  // --help and --version still answer (they are handled before this callback).
  app.parse_complete_callback([] {
    if (!ember::support::settings().isa.empty()) ember::kernel_target();
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every command-line error exits 2 (the shell convention for
    // bad usage), whichever of CLI11's own codes (104, 105, ...) its kind carries.
    return app.exit(e) == 0 ? 0 : kUsageError;
  } catch (const ember::app::ExitStatus& e) {
    return e.code;
  } catch (const std::exception& e) {
    if (ember::dist::initialized() && ember::dist::world_size() > 1) {
      // One rank of a data-parallel job: the others may wait for it in a collective, so the
      // whole job ends here (MPI_Abort; mpirun stops them).
      std::cerr << "ember: error (rank " << ember::dist::rank() << " of "
                << ember::dist::world_size() << "): " << e.what() << "\n";
      ember::dist::abort_job(1);
    }
    std::cerr << "ember: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
