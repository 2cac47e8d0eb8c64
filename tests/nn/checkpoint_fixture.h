// Shared by the checkpoint tests (test_checkpoint*.cpp): helpers, the test modules and the
// Checkpoint fixture.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <numbers>

#include "ember/ember.h"
#include "ember/serialize.h"

namespace ember_checkpoint_test {

namespace fs = std::filesystem;
using namespace ember;

// A tensor's elements as the raw bytes of a realized row-major buffer.
inline std::string raw_bytes(const Tensor& t) {
  Tensor c = t.contiguous();
  c.realize();
  if (t.numel() == 0) return {};
  return std::string(static_cast<const char*>(c.data_ptr()),
                     static_cast<size_t>(t.numel()) * element_size(t.dtype()));
}

struct Snap {
  ScalarType dtype;
  Shape shape;
  std::string bytes;
  const void* storage;  // Tensor::storage_id()
  bool operator==(const Snap&) const = default;
};
inline std::map<std::string, Snap> snapshot(const nn::NamedTensors& ts) {
  std::map<std::string, Snap> s;
  for (auto& [n, t] : ts) s[n] = {t.dtype(), t.sizes(), raw_bytes(t), t.storage_id()};
  return s;
}
// Values only (dtype, shape, bytes), to compare two different modules.
inline std::map<std::string, std::string> values(const nn::NamedTensors& ts) {
  std::map<std::string, std::string> v;
  for (auto& [n, t] : ts)
    v[n] =
        std::string(dtype_name(t.dtype())) + testing::PrintToString(t.sizes()) + ":" + raw_bytes(t);
  return v;
}
// A module's state dict: parameters and buffers.
inline nn::NamedTensors state(const nn::Module& m) {
  nn::NamedTensors all = m.named_parameters();
  for (auto& b : m.named_buffers()) all.push_back(b);
  return all;
}

template <typename T>
inline std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// A safetensors file from a header text and data bytes; `length` overrides the header length.
inline void write_raw(const fs::path& p, const std::string& header, const std::string& data,
                      std::optional<uint64_t> length = std::nullopt) {
  uint64_t n = length.value_or(header.size());
  std::ofstream f(p, std::ios::binary);
  for (int i = 0; i < 8; i++) f.put(static_cast<char>(n >> (8 * i)));
  f << header << data;
}

inline std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// The message of the IOError that f throws ("" when it throws none).
inline std::string io_error(const std::function<void()>& f) try {
  f();
  return "";
} catch (const IOError& e) {
  return e.what();
}

struct RunResult {
  int status;
  std::string output;  // stdout and stderr
};
inline RunResult run(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// An MLP with buffers of every dtype, including special float values (NaN payload, -0.0, inf,
// subnormals) and 0-d and empty tensors; `seed` changes every value.
struct Net : nn::Module {
  explicit Net(uint64_t seed) {
    manual_seed(seed);
    fc1 = register_module("fc1", nn::Linear(4, 8));
    fc2 = register_module("fc2", nn::Linear(8, 2));
    const float s = static_cast<float>(seed);
    register_buffer(
        "stats", from_vector<float>({s, seed % 2 ? -0.0f : 0.0f,
                                     std::bit_cast<float>(0x7fc01234u + uint32_t(seed)), 1e-40f * s,
                                     -std::numeric_limits<float>::infinity()}));
    register_buffer("var", full({}, 1.0 / (3.0 + s), kFloat64).clone());
    register_buffer("counts",
                    from_vector<int64_t>({int64_t(seed), -int64_t(seed),
                                          std::numeric_limits<int64_t>::max() - int64_t(seed)}));
    register_buffer("ids", from_vector<int32_t>({1, -2, 3, int32_t(seed)}, IntList{2, 2}));
    register_buffer("mask", from_vector<bool>({seed % 2 == 1, true, false, seed % 2 == 0, true}));
    register_buffer("bytes", from_vector<uint8_t>({uint8_t(seed), 0, 255}));
    register_buffer("empty", zeros({0, 2}));
  }
  Tensor forward(const Tensor& x) const { return fc2(fc1(x).tanh()); }
  nn::Linear fc1, fc2;
};

// The small module the malformed-file tests load into: w F32 [2, 3] and n I64 [2].
struct Small : nn::Module {
  Small() {
    register_parameter("w", from_vector<float>({-1, -2, -3, -4, -5, -6}, IntList{2, 3}));
    register_buffer("n", from_vector<int64_t>({-7, -8}));
  }
};
inline const std::string kWData = bytes_of(std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f});
inline const std::string kNData = bytes_of(std::vector<int64_t>{70, 80});
inline const std::string kGoodHeader =
    R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
    R"("n":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})";

class Checkpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::path(::testing::TempDir()) /
          ("ember_ckpt_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  // A safetensors file from these parts must be rejected (expect_file_rejected).
  void expect_rejected(const std::string& header, const std::string& data,
                       const std::string& reason, std::optional<uint64_t> length = std::nullopt) {
    const fs::path file = dir / "bad.safetensors";
    write_raw(file, header, data, length);
    expect_file_rejected(file, reason);
  }
  // Loading `file` into a Small must throw IOError naming the file and containing `reason`, on
  // one line, and change nothing.
  void expect_file_rejected(const fs::path& file, const std::string& reason) {
    Small m;
    const auto before = snapshot(state(m));
    const std::string path = file.string();
    const std::string msg = io_error([&] { load(m, path); });
    EXPECT_NE(msg.find("'" + path + "': "), std::string::npos) << msg;
    EXPECT_NE(msg.find(reason), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(snapshot(state(m)), before) << "a failed load changed the module";
  }

  fs::path dir;
};

}  // namespace ember_checkpoint_test
