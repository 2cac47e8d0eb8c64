#include "ember/support/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ember/error.h"
#include "ember/support/read_file.h"

namespace ember::support {

MappedFile::MappedFile(const std::string& path) {
  // Directories, special files (a FIFO opened twice would lose its writer), empty files and the
  // errors: read_file reads them or says what they are.
  struct stat st {};
  int fd = -1;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0 && (::fstat(fd, &st) != 0 || st.st_size == 0)) {
    ::close(fd);
    fd = -1;
  }
  if (fd < 0) {
    read_ = read_file(path);
    data_ = read_.data();
    size_ = read_.size();
    return;
  }
  size_ = static_cast<size_t>(st.st_size);
  // MAP_POPULATE maps every page now, in one call, instead of one page fault per 4 KiB read.
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED)
    throw IOError("cannot read '" + path + "': mmap fails: " + std::strerror(err));
  data_ = static_cast<const char*>(p);
  mapped_ = true;
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace ember::support
