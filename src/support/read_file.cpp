#include "ember/support/read_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ember/error.h"

namespace ember::support {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw IOError("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) throw IOError("cannot read '" + path + "': " + std::strerror(errno));
  return s.str();
}

}  // namespace ember::support
