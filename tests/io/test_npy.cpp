// NumPy .npy files (include/ember/io/npy.h): the bytes NumPy writes (hand-built from the format
// specification), round trips of every dtype, Fortran order, big-endian data, version 2.0, and one
// case per kind of malformed file with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "../support/error_message.h"
#include "ember/ember.h"
#include "ember/io/npy.h"

namespace {

using namespace ember;
namespace fs = std::filesystem;

// A version 1.0 file: magic, version, header length, `dict` padded to 64 bytes, data.
std::string npy(const std::string& dict, const std::string& data, int major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string h = dict;
  h.append((64 - (prefix + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); i++)
    out += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  return out + h + data;
}

template <typename T>
std::string raw(std::vector<T> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

std::string io_error(const std::function<void()>& f) { return ember_test::message_of<IOError>(f); }

void expect_rejected(const std::string& bytes, const std::string& part) {
  const std::string msg = io_error([&] { parse_npy(bytes, "'f.npy'"); });
  EXPECT_NE(msg.find(part), std::string::npos) << msg;
  EXPECT_NE(msg.find("npy file 'f.npy': "), std::string::npos) << msg;
}

const std::string kF4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

TEST(Npy, ReadsTheBytesNumpyWrites) {
  Tensor t = parse_npy(npy(kF4, raw<float>({1, 2, 3, 4, 5, 6})));
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // format_npy writes exactly those bytes (NumPy's layout: data at a multiple of 64).
  EXPECT_EQ(format_npy(t), npy(kF4, raw<float>({1, 2, 3, 4, 5, 6})));
  EXPECT_EQ(format_npy(t).size() % 64, 24u);
}

TEST(Npy, ShapesAndDtypesRoundTrip) {
  const fs::path dir = fs::temp_directory_path() / ("ember-npy-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<Tensor> ts = {from_vector<double>({1.5, -2.25}),
                            from_vector<int32_t>({1, -2, 3, 4}, Shape{2, 1, 2}),
                            from_vector<int64_t>({int64_t{1} << 40}, Shape{}),
                            from_vector<uint8_t>({0, 255, 7}),
                            from_vector<bool>({true, false, true}),
                            from_vector<int8_t>({-128, 127, 0}),
                            from_vector<int16_t>({-32768, 32767}),
                            from_vector<uint16_t>({65535, 1}),
                            from_vector<uint32_t>({4294967295u, 2}),
                            from_vector<uint64_t>({1, 3}),
                            from_vector<float>({1.5f, -65504.0f, 6e-8f}).to(kFloat16),
                            zeros({0, 3}),
                            arange(24).reshape({2, 3, 4}).permute({2, 0, 1})};  // a view
  for (const Tensor& t : ts) {
    const std::string file = (dir / "t.npy").string();
    save_npy(t, file);
    Tensor r = load_npy(file);
    EXPECT_EQ(r.dtype(), t.dtype());
    EXPECT_EQ(r.shape(), t.shape());
    EXPECT_EQ(r.to_vector<double>(), t.to_vector<double>());
  }
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"t.npy"});  // no temporary file stays behind
  fs::remove_all(dir);
}

// The 8- to 64-bit integers and float16 with NumPy's codes and bytes; bfloat16 has no code.
TEST(Npy, NarrowAndUnsignedTypesAndFloat16) {
  const auto dict = [](const char* descr, const char* shape) {
    return std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape +
           ", }";
  };
  Tensor i1 = parse_npy(npy(dict("|i1", "(2,)"), std::string("\x80\x7f", 2)));
  EXPECT_EQ(i1.dtype(), kInt8);
  EXPECT_EQ(i1.to_vector<int64_t>(), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(format_npy(i1), npy(dict("|i1", "(2,)"), std::string("\x80\x7f", 2)));
  const std::string u8 = raw<uint64_t>({(uint64_t{1} << 63) + 1, 5});
  Tensor u = parse_npy(npy(dict("<u8", "(2,)"), u8));
  EXPECT_EQ(u.dtype(), kUInt64);
  EXPECT_EQ(u.to_vector<uint64_t>(), (std::vector<uint64_t>{(uint64_t{1} << 63) + 1, 5}));
  EXPECT_EQ(format_npy(u), npy(dict("<u8", "(2,)"), u8));
  // float16 words: 1, 65504 (the largest), 2^-24 (the least subnormal), -inf.
  const std::string f2 = raw<uint16_t>({0x3c00, 0x7bff, 0x0001, 0xfc00});
  Tensor h = parse_npy(npy(dict("<f2", "(4,)"), f2));
  EXPECT_EQ(h.dtype(), kFloat16);
  EXPECT_EQ(h.to_vector<double>(),
            (std::vector<double>{1, 65504, std::ldexp(1.0, -24), -INFINITY}));
  EXPECT_EQ(format_npy(h), npy(dict("<f2", "(4,)"), f2));
  for (const char* d : {"<i2", "<u2", "<u4"})
    EXPECT_EQ(parse_npy(format_npy(parse_npy(npy(dict(d, "(1,)"), std::string(4, '\x01').substr(
                                                                      0, d[2] == '4' ? 4 : 2)))))
                  .to_vector<int64_t>()[0],
              d[2] == '4' ? 0x01010101 : 0x0101);
  const std::string msg = io_error([] { format_npy(ones({2}, kBFloat16)); });
  EXPECT_NE(msg.find("bfloat16 has no .npy type code"), std::string::npos) << msg;
}

TEST(Npy, OneDimensionalAndZeroDimensionalHeaders) {
  EXPECT_NE(format_npy(from_vector<float>({1})).find("'shape': (1,), }"), std::string::npos);
  EXPECT_NE(format_npy(full({}, 2.0)).find("'shape': (), }"), std::string::npos);
}

TEST(Npy, FortranOrderBigEndianAndVersion2) {
  // Fortran order: column-major data of a 2x3 array [[1, 2, 3], [4, 5, 6]].
  Tensor f = parse_npy(npy("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3), }",
                           raw<int64_t>({1, 4, 2, 5, 3, 6})));
  EXPECT_EQ(f.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  std::string be = raw<int32_t>({1, 256});
  std::swap(be[0], be[3]), std::swap(be[1], be[2]), std::swap(be[4], be[7]),
      std::swap(be[5], be[6]);
  EXPECT_EQ(parse_npy(npy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be))
                .to_vector<int32_t>(),
            (std::vector<int32_t>{1, 256}));
  EXPECT_EQ(parse_npy(npy(kF4, raw<float>({1, 2, 3, 4, 5, 6}), 2)).to_vector<float>()[5], 6.0f);
  // Bool: any nonzero byte reads as true.
  EXPECT_EQ(parse_npy(npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                          std::string("\x00\x07", 2)))
                .to_vector<int64_t>(),
            (std::vector<int64_t>{0, 1}));
}

TEST(Npy, MalformedFiles) {
  const std::string data = raw<float>({1, 2, 3, 4, 5, 6});
  expect_rejected("", "not an .npy file");
  expect_rejected("PK\x03\x04 a zip file", "not an .npy file");
  std::string v9 = npy(kF4, data);
  v9[6] = 9;
  expect_rejected(v9, "unsupported format version 9.0");
  expect_rejected(npy(kF4, data).substr(0, 9), "truncated before the header length");
  expect_rejected(npy(kF4, data).substr(0, 40), "truncated: the header needs 118 bytes, 30 follow");
  expect_rejected(npy("{'descr': '<f4', 'shape': (2, 3), }", data), "missing key 'fortran_order'");
  expect_rejected(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", data),
                  "unexpected key 'x'");
  expect_rejected(
      npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}", data),
      "key 'descr' appears twice");
  expect_rejected(npy("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", data),
                  "dtype '<c8' is not supported");
  expect_rejected(npy("{'descr': '|O', 'fortran_order': False, 'shape': (6,), }", data),
                  "dtype '|O' is not supported");
  expect_rejected(npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (6,), }", data),
                  "fortran_order must be True or False");
  expect_rejected(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-6,), }", data),
                  "shape must be a tuple of non-negative integers");
  expect_rejected(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6, }", data),
                  "malformed header");
  expect_rejected(
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", data),
      "element count overflows");
  expect_rejected(npy(kF4, data.substr(0, 20)),
                  "the data holds 20 bytes, shape [2, 3] of <f4 needs 24");
  expect_rejected(npy(kF4, data + "xx"), "the data holds 26 bytes");
  std::string no_newline = npy(kF4, data);
  no_newline[no_newline.size() - data.size() - 1] = ' ';
  expect_rejected(no_newline, "does not end with spaces and one '\\n'");
}

TEST(Npy, FileErrors) {
  EXPECT_NE(
      io_error([] { load_npy("/nonexistent/x.npy"); }).find("'/nonexistent/x.npy': cannot open"),
      std::string::npos);
  const std::string msg = io_error([] { save_npy(zeros({2}), "/nonexistent/dir/x.npy"); });
  EXPECT_NE(msg.find("npy file '/nonexistent/dir/x.npy': cannot create a temporary file"),
            std::string::npos)
      << msg;
}

}  // namespace
