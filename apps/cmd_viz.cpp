// `ember viz`: one local web page over the records `ember train` writes (runs, learning curves,
// phase times) and what `ember train --profile` adds (kernels, graphs, the trace), with the JSON
// API it reads (README, "ember viz"; apps/viz/).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "commands.h"
#include "option_rules.h"
#include "viz/server.h"

namespace ember::app {

void add_viz_command(CLI::App& app) {
  auto o = std::make_shared<viz::ServerOptions>();
  CLI::App* cmd = app.add_subcommand(
      "viz",
      "Serve a local web page of the runs' learning curves, kernels, graphs and traces, and of "
      "profiled ONNX models");
  cmd->footer(
      "Open the printed URL in a browser. The page lists every run under --runs (folders with a "
      "run.json) and updates while one trains; kernels, graphs and the timeline need a run "
      "trained with `ember train --profile`; the ONNX view lists the models profiled with "
      "`ember onnx run MODEL --profile DIR` into a folder under --runs. Everything is served "
      "from this binary; the browser can read files under --runs only. The JSON API under /api/ "
      "is in README.md, \"ember viz\".\n");
  cmd->option_defaults()->always_capture_default();
  cmd->add_option("--runs", o->runs_dir, "Folder of runs (ember train's runs/, or one run)")
      ->check(rule::existing_path());
  cmd->add_option("--port", o->port, "Port to listen on (0: a free one, printed)")
      ->check(rule::in_range(0, 65535));
  cmd->add_option("--host", o->host,
                  "Address to listen on (the default serves this machine only; 0.0.0.0 serves "
                  "every network it is on)");
  cmd->callback([o] {
    viz::Server server(*o);
    server.bind();
    std::printf("ember viz: serving %s at %s (Ctrl-C stops)\n", o->runs_dir.c_str(),
                server.url().c_str());
    std::fflush(stdout);
    server.run();
  });
}

}  // namespace ember::app
