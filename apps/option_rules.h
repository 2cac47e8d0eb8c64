// Named rules for option values, as CLI11 validators shared by every `ember` subcommand. Each
// message states the rule and the value typed ("must be > 0 (got 0)"); apps/parse_errors.cpp puts
// the option's name in front ("--lr must be > 0 (got 0)"). Each rule's description is what
// --help shows after the option's type (INT:POSITIVE, FLOAT in [0, 1], ...).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace ember::app::rule {

CLI::Validator positive();      // a finite number > 0
CLI::Validator non_negative();  // a finite number >= 0
CLI::Validator finite();        // a finite number
/// A number between lo and hi; `bounds` says which ends belong: "[]" (both), "[)", "(]", "()".
CLI::Validator in_range(double lo, double hi, std::string_view bounds = "[]");
CLI::Validator one_of(std::vector<std::string> choices);
CLI::Validator existing_path();  // an existing file or directory (the OS's reason when not)

/// Gives every unsigned option of `app` and its subcommands (CLI11 type UINT) the rule ">= 0":
/// CLI11 converts with strtoull, which wraps "-3" to 2^64-3 instead of refusing it.
void refuse_negative_unsigned(CLI::App& app);

}  // namespace ember::app::rule
