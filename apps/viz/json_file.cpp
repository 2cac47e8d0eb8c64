#include "viz/json_file.h"

#include "ember/error.h"
#include "ember/support/read_file.h"

namespace ember::viz {

using nlohmann::json;

namespace {

// The deepest nesting of [ and { in `text`, brackets inside strings not counted; stops counting
// once past `limit`.
int nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size() && deepest <= limit; i++) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      depth--;
    }
  }
  return deepest;
}

}  // namespace

JsonText parse_json(const std::string& text, const std::string& what) {
  if (nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    return {nullptr, what + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
  try {
    return {json::parse(text), ""};
  } catch (const json::parse_error& e) {
    return {nullptr, what + ": not JSON (" + e.what() + ")"};
  }
}

JsonText read_json_file(const std::filesystem::path& path) {
  std::string text;
  try {
    text = support::read_file(path.string());
  } catch (const Error& e) {
    return {nullptr, e.what()};
  }
  return parse_json(text, path.string());
}

}  // namespace ember::viz
