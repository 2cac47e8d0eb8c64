#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "ember/error.h"

namespace ember::rl {

void write_file_atomic(const std::string& path, std::string_view bytes) {
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  std::string tmp = dir + "/." + p.filename().string() + ".tmp-XXXXXX";
  const int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0)
    throw IOError("cannot create a temporary file for '" + path + "': " + strerror(errno));
  auto fail = [&](const std::string& what) {
    const int e = errno;
    close(fd);
    unlink(tmp.c_str());
    throw IOError("cannot write '" + path + "' (" + what + "): " + strerror(e));
  };
  fchmod(fd, 0644);  // mkstemp makes 0600; run files are meant to be read by others
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) fail("fsync");
  if (close(fd) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    throw IOError("cannot write '" + path + "' (close): " + strerror(e));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    throw IOError("cannot rename '" + tmp + "' to '" + path + "': " + strerror(e));
  }
  // The rename itself is durable once the directory is synced.
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

}  // namespace ember::rl
