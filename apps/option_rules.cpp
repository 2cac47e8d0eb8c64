#include "option_rules.h"

#include <sys/stat.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>

namespace ember::app::rule {
namespace {

// `text` as a finite number (CLI11's own syntax: decimal, exponent or 0x), or nothing.
std::optional<double> number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A bound as written in a message: integers in full ("1000000000"), others shortest (%g).
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v == std::round(v) && std::fabs(v) < 1e15 ? "%.0f" : "%g", v);
  return b;
}

// A rule on the number typed: `holds` decides, `rule` says it ("> 0", "in [0, 1]").
CLI::Validator numeric(std::string rule, std::string description,
                       std::function<bool(double)> holds) {
  return CLI::Validator(
      [rule, holds](std::string& text) -> std::string {
        const std::optional<double> v = number(text);
        if (!v)
          return "must be a finite number" + (rule.empty() ? "" : " " + rule) + " (got '" + text +
                 "')";
        if (!holds(*v)) return "must be " + rule + " (got " + text + ")";
        return "";
      },
      std::move(description));
}

// The OS's reason when `path` cannot be examined (no such file, permission denied), or "".
std::string stat_error(const std::string& path, struct stat* st) {
  return ::stat(path.c_str(), st) == 0 ? "" : std::strerror(errno);
}

}  // namespace

CLI::Validator positive() {
  return numeric("> 0", "POSITIVE", [](double v) { return v > 0; });
}

CLI::Validator non_negative() {
  return numeric(">= 0", "NONNEGATIVE", [](double v) { return v >= 0; });
}

CLI::Validator finite() {
  return numeric("", "FINITE", [](double) { return true; });
}

CLI::Validator in_range(double lo, double hi, std::string_view bounds) {
  const bool with_lo = bounds.substr(0, 1) == "[", with_hi = bounds.substr(1, 1) == "]";
  const std::string r =
      "in " + std::string(1, bounds[0]) + num(lo) + ", " + num(hi) + std::string(1, bounds[1]);
  return numeric(r, r, [lo, hi, with_lo, with_hi](double v) {
    return (with_lo ? v >= lo : v > lo) && (with_hi ? v <= hi : v < hi);
  });
}

CLI::Validator one_of(std::vector<std::string> choices) {
  std::string list, braces;
  for (const std::string& c : choices) {
    list += (list.empty() ? "" : ", ") + c;
    braces += (braces.empty() ? "" : ",") + c;
  }
  return CLI::Validator(
      [choices, list](std::string& text) -> std::string {
        for (const std::string& c : choices)
          if (text == c) return "";
        return "must be one of " + list + " (got '" + text + "')";
      },
      "{" + braces + "}");
}

CLI::Validator existing_path() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        struct stat st {};
        if (std::string why = stat_error(path, &st); !why.empty())
          return "must name an existing file or directory (got '" + path + "': " + why + ")";
        return "";
      },
      "PATH");
}

void refuse_negative_unsigned(CLI::App& app) {
  const CLI::Validator unsigned_rule(
      [](std::string& text) -> std::string {
        const size_t first = text.find_first_not_of(" \t");
        if (first != std::string::npos && text[first] == '-')
          return "must be >= 0 (got " + text + ")";
        return "";
      },
      "");
  for (CLI::Option* o : app.get_options())
    if (o->get_type_name().rfind("UINT", 0) == 0) o->check(unsigned_rule);
  for (CLI::App* sub : app.get_subcommands({})) refuse_negative_unsigned(*sub);
}

}  // namespace ember::app::rule
