#include "ember/support/read_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ember/error.h"

namespace ember::support {

std::string read_file(const std::string& path) {
  // An ifstream opens a directory on Linux and reads nothing: say what it is instead.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw IOError("cannot read '" + path + "': it is a directory, not a file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw IOError("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) throw IOError("cannot read '" + path + "': " + std::strerror(errno));
  return s.str();
}

}  // namespace ember::support
