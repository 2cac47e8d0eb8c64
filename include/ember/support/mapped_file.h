// ember/support/mapped_file.h — a whole file's bytes mapped into memory, read-only (part of the
// support floor: the ONNX loader parses a model of hundreds of MB in place, without copying it
// out of the page cache as read_file.h would).
#pragma once
#include <string>
#include <string_view>

#include "ember/support/non_copyable.h"

namespace ember::support {

/// The bytes of the file at `path`, mapped (mmap, read-only, private) for the object's life. A
/// file that cannot be mapped (a pipe, a /proc file) is read into memory instead. Throws IOError
/// as read_file does: "cannot open" with strerror's reason, "it is a directory", "cannot read".
/// As with any mapping, a file that another process truncates meanwhile ends this one (SIGBUS).
class MappedFile : NonCopyable {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  std::string_view bytes() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::string read_;  // the bytes of a file that is not mapped
};

}  // namespace ember::support
