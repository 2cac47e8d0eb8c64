// The on-disk cache of compiled kernels, made safe to share a machine with.
//
// Directories: the cache directory (compiler.h cache_dir()) is created 0700. A directory is
// trusted only when it is a directory owned by the effective user and not writable by group or
// others; an untrusted one is ignored with a warning (stderr, once per directory) and its entries
// are never loaded. When the cache directory is untrusted or not writable (a read-only cache), new
// entries go to the per-user directory $TMPDIR/ember-<uid> (default /tmp/ember-<uid>; created
// 0700, must not be a symlink, owner-checked); when that fails too, a kernel is compiled in a
// private mkdtemp() directory that is removed once the object is loaded, so nothing is left behind.
// A directory that disappears while a process runs is recreated on the next compilation.
//
// Entries: <dir>/<key>.so is the shared object followed by a trailer (ELF loaders ignore bytes
// after the section headers):
//   16 bytes "ember-kcache-v1\n", 16 bytes the key's name (hex), 8 bytes the key's check digest,
//   8 bytes the object's size, 8 bytes the object's checksum (little-endian u64s; 56 bytes).
// Before dlopen an entry is opened with O_NOFOLLOW and checked: a regular file owned by the user,
// not writable by group or others (otherwise ignored with a warning), and a trailer that names this
// key and matches the bytes. A truncated, foreign or mismatched entry is recompiled, never run.
// New entries are built in a mkdtemp() directory inside the cache directory and renamed into
// place, so readers see a whole entry or none.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ember::runtime {

/// A cache key: `name` (16 hex digits, the file name) and `check`, an independent 64-bit digest of
/// the same key material, so a foreign entry must collide in both to pass.
struct CacheKey {
  std::string name;
  uint64_t check = 0;
};

/// The key of `material` (the kernel source plus the compiler identity, flags and CPU).
CacheKey make_cache_key(std::string_view material);

/// 64-bit checksum of `bytes` (word-wise multiply-xorshift; not cryptographic).
uint64_t cache_checksum(std::string_view bytes);

/// The trailer to append to `object` to make it the entry for `key`.
std::string cache_entry_trailer(std::string_view object, const CacheKey& key);

/// Checks a whole entry's bytes against `key`: returns std::nullopt when it is valid, else why
/// not ("no ember trailer (truncated, ...)", "truncated or extended ...", "built for another key",
/// "checksum mismatch").
std::optional<std::string> check_cache_entry(std::string_view bytes, const CacheKey& key);

/// Prints "ember: warning: ..." to stderr once per distinct message.
void cache_warning(const std::string& message);

/// Creates `dir` (0700 for the last component) if needed and returns std::nullopt when it is
/// trusted, else why not. `no_symlink`: refuse a symlink (for directories in shared places).
std::optional<std::string> ensure_private_dir(const std::string& dir, bool no_symlink);

/// Whether the effective user can create files in `dir`.
bool dir_writable(const std::string& dir);

/// $TMPDIR/ember-<uid> (default /tmp/ember-<uid>).
std::string per_user_tmp_dir();

/// Reads and checks `<dir>/<key.name>.so` and dlopen()s it when valid; nullptr when absent,
/// untrusted (with a warning) or invalid (with a warning naming the reason).
void* load_cache_entry(const std::string& dir, const CacheKey& key);

}  // namespace ember::runtime
