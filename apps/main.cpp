// The `ember` command line: subcommands are registered from apps/commands.h.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"ember: a lazy, fusing tensor library and the PPO agent that trains with it"};
  app.require_subcommand(1);
  ember::app::add_env_command(app);
  ember::app::add_inspect_command(app);
  ember::app::add_train_command(app);
  ember::app::add_eval_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ember::app::ExitStatus& e) {
    return e.code;
  } catch (const std::exception& e) {
    std::cerr << "ember: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
