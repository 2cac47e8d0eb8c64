#include "parse_errors.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <vector>

namespace ember::app {
namespace {

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring).
size_t edit_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

// The subcommand the command line reached: the deepest one parsed.
const CLI::App* reached(const CLI::App* app) {
  for (;;) {
    const std::vector<CLI::App*> subs = app->get_subcommands();
    if (subs.empty()) return app;
    app = subs.back();
  }
}

// "ember train" for the train subcommand.
std::string command_name(const CLI::App* app) {
  std::string name = app->get_name();
  while ((app = app->get_parent()) != nullptr) name = app->get_name() + " " + name;
  return name;
}

std::vector<std::string> option_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app->get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::vector<std::string> subcommand_names(const CLI::App* app) {
  std::vector<std::string> names;
  const std::function<bool(const CLI::App*)> all;
  for (const CLI::App* sub : app->get_subcommands(all)) names.push_back(sub->get_name());
  return names;
}

// Of `names`, the one nearest to `typed` by edit distance when at most 1 + |typed|/4 edits away
// (a typo, not another word); "" otherwise. On a tie, the first.
std::string nearest_name(const std::string& typed, const std::vector<std::string>& names) {
  const size_t limit = 1 + typed.size() / 4;
  std::string best;
  size_t best_d = limit + 1;
  for (const std::string& n : names)
    if (const size_t d = edit_distance(typed, n); d < best_d) best = n, best_d = d;
  return best;
}

std::string suggestion(const std::string& typed, const std::vector<std::string>& names) {
  const std::string near = nearest_name(typed, names);
  return near.empty() ? "" : "; did you mean '" + near + "'?";
}

// The first argument the command line left unused in the deepest subcommand that left one (an
// option before a plain word), and that subcommand; nullptr when every argument was used.
const CLI::App* leftover(const CLI::App* app, std::string* arg) {
  for (const CLI::App* a = reached(app); a != nullptr; a = a->get_parent()) {
    const std::vector<std::string> rest = a->remaining();
    if (rest.empty()) continue;
    const auto option = std::find_if(rest.begin(), rest.end(),
                                     [](const std::string& r) { return r.rfind("-", 0) == 0; });
    *arg = option != rest.end() ? *option : rest.front();
    return a;
  }
  return nullptr;
}

std::string unused_argument(const CLI::App* where, const std::string& arg) {
  if (arg.size() > 1 && arg[0] == '-') {
    const std::string name = arg.substr(0, arg.find('='));
    return "unknown option '" + name + "'" + suggestion(name, option_names(where));
  }
  if (std::vector<std::string> subs = subcommand_names(where); !subs.empty())
    return "unknown command '" + arg + "'" + suggestion(arg, subs);
  return "unexpected argument '" + arg + "'";
}

// CLI11's "Could not convert: --repeat = 1.5" as "--repeat must be an integer (got '1.5')", the
// kind of value named from the option's declared type (INT, UINT, FLOAT; with a rule after ':').
std::string conversion_text(const CLI::App* where, const std::string& text) {
  const std::string head = "Could not convert: ";
  const size_t eq = text.find(" = ");
  if (text.rfind(head, 0) != 0 || eq == std::string::npos) return text;
  const std::string name = text.substr(head.size(), eq - head.size());
  const std::string value = text.substr(eq + 3);
  const CLI::Option* o = where->get_option_no_throw(name);
  const std::string type =
      o == nullptr ? "" : o->get_type_name().substr(0, o->get_type_name().find(':'));
  const std::string kind = type == "INT"     ? "an integer"
                           : type == "UINT"  ? "a non-negative integer"
                           : type == "FLOAT" ? "a number"
                                             : "a valid " + (type.empty() ? "value" : type);
  return name + " must be " + kind + " (got '" + value + "')";
}

// "a, b or c".
std::string or_list(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return list;
}

}  // namespace

std::string describe_parse_error(const CLI::App* app, const CLI::Error& e) {
  std::string text;
  std::string arg;
  // An unknown name explains the rest (a subcommand "missing" after a mistyped one).
  if (const CLI::App* where = leftover(app, &arg)) {
    text = unused_argument(where, arg);
  } else {
    text = e.what();
    // CLI11 writes a rule's failure as "NAME: MESSAGE"; the rules (option_rules.h) phrase
    // MESSAGE to follow the name: "--lr must be > 0 (got 0)".
    if (e.get_name() == "ValidationError")
      if (const size_t colon = text.find(": "); colon != std::string::npos) text.erase(colon, 1);
    if (e.get_name() == "ConversionError") text = conversion_text(reached(app), text);
    if (e.get_name() == "RequiredError" && text.rfind("A subcommand", 0) == 0)
      text = "a command is required: " + or_list(subcommand_names(reached(app)));
  }
  return "ember: error: " + text + "\nRun '" + command_name(reached(app)) +
         " --help' for more information.\n";
}

}  // namespace ember::app
