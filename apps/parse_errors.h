// How `ember` reports a command line it cannot run: one line naming the option (or subcommand)
// and what is wrong with it, a suggestion for a mistyped name, and where the help is, e.g.
//   ember: error: unknown option '--lrr'; did you mean '--lr'?
//   Run 'ember train --help' for the options.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
class Error;
}  // namespace CLI

namespace ember::app {

/// The message for a parse error of `app` (the top-level app, after a failed parse): installed
/// as its CLI::App::failure_message.
std::string describe_parse_error(const CLI::App* app, const CLI::Error& e);

/// Of `names`, the one nearest to `typed` by edit distance (optimal string alignment: insertions,
/// deletions, substitutions and swaps of neighbours), when at most 1 + |typed|/4 edits away;
/// "" otherwise. On a tie, the first.
std::string nearest_name(const std::string& typed, const std::vector<std::string>& names);

}  // namespace ember::app
