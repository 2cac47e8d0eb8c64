#include "atomic_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>

#include "ember/error.h"

namespace ember::io_detail {

namespace {

using Fail = std::function<void(const std::string&)>;  // throws

void write_all(int fd, const char* p, size_t n, const std::string& tmp, const Fail& fail) {
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      fail("write error: " + err);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

void write_atomic(const std::string& path, const std::vector<std::pair<const char*, size_t>>& parts,
                  const std::string& error_prefix) {
  const Fail fail = [&](const std::string& what) { throw IOError(error_prefix + what); };
  namespace fs = std::filesystem;
  static std::atomic<uint64_t> counter{0};
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
    std::string name = ".";
    name += target.filename().string();
    name += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    tmp = (dir / name).string();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      fail("cannot create a temporary file in '" + dir.string() + "': " + std::strerror(errno));
  }
  if (fd < 0) fail("cannot create a temporary file in '" + dir.string() + "'");
  for (auto& [p, n] : parts) write_all(fd, p, n, tmp, fail);
  if (::fsync(fd) != 0) {
    const std::string err = std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    fail("fsync failed: " + err);
  }
  if (::close(fd) != 0) {
    const std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail("close failed: " + err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail("cannot rename the temporary file into place: " + err);
  }
  // Make the rename itself durable.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace ember::io_detail
