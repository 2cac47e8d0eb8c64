// Whole-file reads (read_file.h) and mappings (mapped_file.h): the bytes of regular files of any
// size, of files whose size stat does not know (a FIFO), and clear errors for the rest.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "ember/error.h"
#include "ember/support/mapped_file.h"
#include "ember/support/read_file.h"
#include "error_message.h"

namespace {

namespace fs = std::filesystem;
using ember::IOError;
using ember::support::MappedFile;
using ember::support::read_file;
using ember_test::message_of;

// A fresh directory removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ember-files-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name, const std::string& bytes) const {
    const fs::path p = path / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
};

// n bytes that differ along the file (a misplaced block shows).
std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) s[i] = static_cast<char>(i * 131 + i / 4096);
  return s;
}

TEST(Files, RegularFilesWhole) {
  TempDir d;
  for (size_t n : {size_t{0}, size_t{1}, size_t{4096}, size_t{3 << 20}}) {
    const std::string bytes = pattern(n), f = d.file("f" + std::to_string(n), bytes);
    EXPECT_EQ(read_file(f), bytes) << n << " bytes";
    MappedFile m(f);
    EXPECT_EQ(m.bytes(), bytes) << n << " bytes";
  }
}

// A FIFO's stat size is 0: the reads go on until the writer closes it.
TEST(Files, FifoWhole) {
  TempDir d;
  const std::string bytes = pattern(70000), fifo = (d.path / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::signal(SIGPIPE, SIG_IGN);  // a reader that stops early fails the test, not the process
  for (int mapped = 0; mapped < 2; mapped++) {
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
    std::string got = mapped ? std::string(MappedFile(fifo).bytes()) : read_file(fifo);
    writer.join();
    EXPECT_EQ(got.size(), bytes.size());
    EXPECT_TRUE(got == bytes) << (mapped ? "MappedFile" : "read_file");
  }
}

TEST(Files, ErrorsNameTheFile) {
  TempDir d;
  const std::string missing = (d.path / "absent").string(), dir = d.path.string();
  for (int mapped = 0; mapped < 2; mapped++) {
    auto read = [&](const std::string& p) { mapped ? (void)MappedFile(p) : (void)read_file(p); };
    EXPECT_EQ(message_of<IOError>([&] { read(missing); }),
              "cannot open '" + missing + "': No such file or directory");
    EXPECT_EQ(message_of<IOError>([&] { read(dir); }),
              "cannot read '" + dir + "': it is a directory, not a file");
  }
}

}  // namespace
