#include "ember/support/atomic_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ember/error.h"

namespace ember::support {

namespace {

// Closes and removes the temporary file, then throws naming the step and errno's reason.
[[noreturn]] void fail(int fd, const std::string& tmp, const std::string& prefix,
                       const std::string& step) {
  const std::string reason = std::strerror(errno);
  if (fd >= 0) ::close(fd);
  ::unlink(tmp.c_str());
  throw IOError(prefix + step + ": " + reason);
}

void write_all(int fd, std::string_view bytes, const std::string& tmp, const std::string& prefix) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(fd, tmp, prefix, "write error");
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void write_file_atomic(const std::string& path, std::span<const std::string_view> parts,
                       const std::string& error_prefix) {
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  std::string tmp = dir + "/." + p.filename().string() + ".tmp-XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0)
    throw IOError(error_prefix + "cannot create a temporary file in '" + dir +
                  "': " + std::strerror(errno));
  ::fchmod(fd, 0644);  // mkstemp makes 0600; these files are meant to be read by others
  for (std::string_view part : parts) write_all(fd, part, tmp, error_prefix);
  if (::fsync(fd) != 0) fail(fd, tmp, error_prefix, "fsync failed");
  if (::close(fd) != 0) fail(-1, tmp, error_prefix, "close failed");
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    fail(-1, tmp, error_prefix, "cannot rename the temporary file into place");
  // The rename itself is durable once the directory is synced.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomic(const std::string& path, std::string_view bytes,
                       const std::string& error_prefix) {
  write_file_atomic(path, std::span<const std::string_view>(&bytes, 1), error_prefix);
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_file_atomic(path, bytes, "cannot write '" + path + "': ");
}

}  // namespace ember::support
