#include "ember/support/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ember/error.h"

namespace ember::support {

namespace {

[[noreturn]] void fail(int fd, const std::string& what, const std::string& path) {
  const std::string reason = std::strerror(errno);
  if (fd >= 0) ::close(fd);
  throw IOError(what + " '" + path + "': " + reason);
}

}  // namespace

std::string read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(fd, "cannot open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(fd, "cannot read", path);
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw IOError("cannot read '" + path + "': it is a directory, not a file");
  }
  // One buffer of the file's size, filled by read(2): a stream copy doubles its buffer as it
  // goes and copies the result once more (3 copies of a 100 MB model instead of 1). Files whose
  // size stat does not know (pipes, /proc) grow in steps until read returns 0.
  std::string bytes;
  bytes.resize(S_ISREG(st.st_mode) && st.st_size > 0 ? static_cast<size_t>(st.st_size) : 4096);
  size_t done = 0;
  for (;;) {
    char probe;  // when the buffer is full: one byte more, or the end that a full buffer expects
    const bool full = done == bytes.size();
    const ssize_t n =
        full ? ::read(fd, &probe, 1) : ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(fd, "cannot read", path);
    if (n == 0) break;
    if (full) {
      bytes.resize(bytes.size() * 2);
      bytes[done] = probe;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

}  // namespace ember::support
