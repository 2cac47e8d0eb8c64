#include "runtime/cpu/kernel_cache.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

namespace ember::runtime {

namespace {

constexpr char kMagic[16] = {'e', 'm', 'b', 'e', 'r', '-', 'k', 'c',
                             'a', 'c', 'h', 'e', '-', 'v', '1', '\n'};
constexpr size_t kTrailerSize = 16 + 16 + 8 + 8 + 8;
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;

// FNV-1a 64-bit, printed as hex: stable across runs and builds (std::hash is not). The entry's
// file name, as before the trailer existed.
std::string fnv1a_hex(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// Word-wise multiply-xorshift hash (a different construction from FNV, so the two digests of a key
// are independent).
uint64_t mix_hash(std::string_view s, uint64_t seed) {
  uint64_t h = seed ^ (s.size() * 0x9E3779B97F4A7C15ULL);
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail) * 0x94D049BB133111EBULL;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  return h ^ (h >> 32);
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string describe_mode(mode_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

}  // namespace

CacheKey make_cache_key(std::string_view material) {
  return {fnv1a_hex(material), mix_hash(material, 0x656d6265724b6579ULL)};
}

uint64_t cache_checksum(std::string_view bytes) { return mix_hash(bytes, 0x6f626a6563747375ULL); }

std::string cache_entry_trailer(std::string_view object, const CacheKey& key) {
  std::string t(kMagic, sizeof kMagic);
  std::string name = key.name;
  name.resize(16, '\0');
  t += name;
  put_u64(t, key.check);
  put_u64(t, object.size());
  put_u64(t, cache_checksum(object));
  return t;
}

std::optional<std::string> check_cache_entry(std::string_view bytes, const CacheKey& key) {
  if (bytes.size() < kTrailerSize) return "truncated (" + std::to_string(bytes.size()) + " bytes)";
  const char* t = bytes.data() + bytes.size() - kTrailerSize;
  if (std::memcmp(t, kMagic, sizeof kMagic) != 0)
    return std::string("no ember trailer (truncated, or not an ember cache entry)");
  std::string name = key.name;
  name.resize(16, '\0');
  if (std::memcmp(t + 16, name.data(), 16) != 0 || get_u64(t + 32) != key.check)
    return std::string("built for another key");
  const uint64_t size = get_u64(t + 40);
  if (size != bytes.size() - kTrailerSize)
    return "truncated or extended (" + std::to_string(bytes.size() - kTrailerSize) +
           " object bytes, trailer says " + std::to_string(size) + ")";
  if (get_u64(t + 48) != cache_checksum(bytes.substr(0, size)))
    return std::string("checksum mismatch");
  return std::nullopt;
}

void cache_warning(const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mu);
  if (seen.insert(message).second) std::fprintf(stderr, "ember: warning: %s\n", message.c_str());
}

std::optional<std::string> ensure_private_dir(const std::string& dir, bool no_symlink) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create it: " + std::string(std::strerror(errno));
  struct stat st;
  if ((no_symlink ? lstat(dir.c_str(), &st) : stat(dir.c_str(), &st)) != 0)
    return "cannot stat it: " + std::string(std::strerror(errno));
  if (S_ISLNK(st.st_mode)) return std::string("it is a symbolic link");
  if (!S_ISDIR(st.st_mode)) return std::string("it is not a directory");
  if (st.st_uid != geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " +
           std::to_string(geteuid()) + ")";
  if (st.st_mode & 022)
    return "it is writable by group or others (mode " + describe_mode(st.st_mode) + ")";
  return std::nullopt;
}

bool dir_writable(const std::string& dir) { return access(dir.c_str(), W_OK | X_OK) == 0; }

std::string per_user_tmp_dir() {
  const char* t = std::getenv("TMPDIR");
  const std::string base = t && *t ? t : "/tmp";
  return base + "/ember-" + std::to_string(geteuid());
}

void* load_cache_entry(const std::string& dir, const CacheKey& key) {
  const std::string path = dir + "/" + key.name + ".so";
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno != ENOENT)
      cache_warning("ignoring kernel cache entry '" + path + "': " + std::strerror(errno));
    return nullptr;
  }
  std::string bytes;
  std::optional<std::string> bad;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    bad = std::string("cannot stat it");
  } else if (!S_ISREG(st.st_mode)) {
    bad = std::string("not a regular file");
  } else if (st.st_uid != geteuid()) {
    bad = "owned by uid " + std::to_string(st.st_uid) + ", not by you; never loaded";
  } else if (st.st_mode & 022) {
    bad = "writable by group or others (mode " + describe_mode(st.st_mode) + "); never loaded";
  } else if (static_cast<uint64_t>(st.st_size) > kMaxEntryBytes) {
    bad = "too large (" + std::to_string(st.st_size) + " bytes)";
  } else {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    bytes.resize(got);
    bad = check_cache_entry(bytes, key);
  }
  close(fd);
  if (bad) {
    cache_warning("ignoring kernel cache entry '" + path + "': " + *bad + " (recompiling)");
    return nullptr;
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) cache_warning("cannot load kernel cache entry '" + path + "': " + dlerror());
  return h;
}

}  // namespace ember::runtime
