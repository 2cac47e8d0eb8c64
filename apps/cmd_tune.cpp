// `ember tune --list | --clear`: the schedule search's cache (ember/tune.h). A search runs with
// BEAM=n (any command) or `ember train --tune`; this command shows and empties what it kept.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "commands.h"
#include "ember/tune.h"

namespace ember::app {
namespace {

struct TuneArgs {
  bool list = false, clear = false;
};

void list_rows() {
  const std::vector<TunedKernel> rows = tune_cache_rows();
  std::printf("%s: %zu kernel%s\n", tune_cache_path().c_str(), rows.size(),
              rows.size() == 1 ? "" : "s");
  for (const TunedKernel& r : rows) {
    const std::string isa = r.target.substr(0, r.target.find(' '));
    std::printf("%-24s %2lld threads %-7s %9.2f us -> %9.2f us (%.2fx), %lld plans in %.1f s: %s\n",
                r.kernel.c_str(), static_cast<long long>(r.threads), isa.c_str(), r.heuristic_us,
                r.tuned_us, r.tuned_us > 0 ? r.heuristic_us / r.tuned_us : 1.0,
                static_cast<long long>(r.candidates), r.search_seconds, r.plan.c_str());
    std::printf("%-24s cpu %s; %s; ember %s; %s UTC\n", "", r.cpu.c_str(), r.compiler.c_str(),
                r.ember_version.c_str(), r.created.c_str());
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto a = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Show or empty the schedule search's cache (searches run with BEAM=n or train --tune)");
  cmd->footer(
      "A search (BEAM=n in the environment of any command, or `ember train --tune`) times each "
      "kernel under plans one action after another from the heuristic's and keeps the fastest in "
      "<kernel cache directory>/tune.sqlite, one row per kernel, CPU, ISA level, thread count, "
      "compiler and ember version; later runs on the same machine use it.\n");
  CLI::Option* list = cmd->add_flag("--list", a->list, "List the cache's rows");
  CLI::Option* clear = cmd->add_flag("--clear", a->clear, "Empty the cache");
  list->excludes(clear);
  cmd->require_option(1);
  cmd->callback([a] {
    if (a->list) return list_rows();
    const int64_t n = clear_tune_cache();
    std::printf("%s: %lld row%s removed\n", tune_cache_path().c_str(), static_cast<long long>(n),
                n == 1 ? "" : "s");
  });
}

}  // namespace ember::app
