// How `ember` reports a command line it cannot run: one line naming the option (or subcommand)
// and what is wrong with it, a suggestion for a mistyped name, and where the help is, e.g.
//   ember: error: unknown option '--lrr'; did you mean '--lr'?
//   Run 'ember train --help' for the options.
#pragma once

#include <string>

namespace CLI {
class App;
class Error;
}  // namespace CLI

namespace ember::app {

/// The message for a parse error of `app` (the top-level app, after a failed parse): installed
/// as its CLI::App::failure_message.
std::string describe_parse_error(const CLI::App* app, const CLI::Error& e);

}  // namespace ember::app
