// Malformed safetensors files: one test per kind of problem; each load must throw IOError naming
// the file and the problem and leave the module unchanged.
#include <initializer_list>
#include <string>

#include "checkpoint_fixture.h"

namespace {

using namespace ember_checkpoint_test;
using namespace ember;
namespace fs = std::filesystem;

// One tensor's entry of a safetensors header.
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}
// Small's two tensors as the good file has them (kGoodHeader = header({kW, kN})).
const std::string kW = entry("w", "F32", "[2,3]", "[0,24]");
const std::string kN = entry("n", "I64", "[2]", "[24,40]");

// A header of these entries, in this order.
std::string header(std::initializer_list<std::string> entries) {
  std::string h = "{";
  for (const std::string& e : entries) h += (h.size() > 1 ? "," : "") + e;
  return h + "}";
}

// ---- malformed files: one test per problem; each leaves the module unchanged --------------------

TEST_F(Checkpoint, CraftedGoodFileLoads) {  // the baseline every malformed case below mutates
  write_raw(dir / "good.safetensors", kGoodHeader, kWData + kNData);
  Small m;
  load(m, (dir / "good.safetensors").string());
  EXPECT_EQ(raw_bytes(m.named_parameters()[0].second), kWData);
  EXPECT_EQ(raw_bytes(m.named_buffers()[0].second), kNData);
}

TEST_F(Checkpoint, MissingFile) {
  Small m;
  const std::string path = (dir / "absent.safetensors").string();
  const std::string msg = io_error([&] { load(m, path); });
  EXPECT_NE(msg.find(path + "': cannot open"), std::string::npos) << msg;
}

TEST_F(Checkpoint, TruncatedBeforeHeaderLength) {
  const fs::path file = dir / "bad.safetensors";
  std::ofstream(file, std::ios::binary).write("\x10\0\0", 3);
  expect_file_rejected(file, "truncated: 3 bytes, shorter than the 8-byte header length");
}

TEST_F(Checkpoint, TruncatedData) {
  expect_rejected(kGoodHeader, (kWData + kNData).substr(0, 36), "run past the end of the data");
}

TEST_F(Checkpoint, HeaderLengthPastEndOfFile) {
  expect_rejected(kGoodHeader, kWData + kNData, "runs past the end of the file", 100000);
}

TEST_F(Checkpoint, BadJson) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],)", kWData + kNData, "not valid JSON");
  expect_rejected("", kWData + kNData, "not valid JSON");  // header length 0
}

TEST_F(Checkpoint, HeaderNotAnObject) {
  expect_rejected("[1, 2, 3]", kWData + kNData, "not a JSON object");
}

TEST_F(Checkpoint, OffsetsOutOfRange) {
  expect_rejected(header({kW, entry("n", "I64", "[2]", "[32,48]")}), kWData + kNData,
                  "run past the end of the data (40 bytes");
}

TEST_F(Checkpoint, OffsetsOverlap) {
  expect_rejected(header({kW, entry("n", "I64", "[2]", "[16,32]")}),
                  (kWData + kNData).substr(0, 32), "overlap");
}

TEST_F(Checkpoint, OffsetsLeaveAGap) {
  expect_rejected(header({kW, entry("n", "I64", "[2]", "[32,48]")}),
                  kWData + std::string(8, '\0') + kNData, "belong to no tensor");
}

TEST_F(Checkpoint, OffsetsDoNotCoverTrailingData) {
  expect_rejected(kGoodHeader, kWData + kNData + std::string(8, '\0'), "cover only 40");
}

TEST_F(Checkpoint, OffsetsDisagreeWithShape) {
  expect_rejected(
      header({entry("w", "F32", "[2,3]", "[0,20]"), entry("n", "I64", "[2]", "[20,36]")}),
      (kWData + kNData).substr(0, 36), "hold 20 bytes but shape [2, 3] of F32 needs 24");
}

TEST_F(Checkpoint, OffsetsReversed) {
  expect_rejected(header({entry("w", "F32", "[2,3]", "[24,0]"), kN}), kWData + kNData,
                  "end before they begin");
}

TEST_F(Checkpoint, UnknownDtype) {
  expect_rejected(header({entry("w", "F17", "[2,3]", "[0,24]"), kN}), kWData + kNData,
                  "unknown dtype 'F17'");
}

TEST_F(Checkpoint, UnsupportedDtype) {
  expect_rejected(
      header({entry("w", "F8_E4M3", "[2,3]", "[0,6]"), entry("n", "I64", "[2]", "[6,22]")}),
      kWData.substr(0, 6) + kNData, "dtype F8_E4M3 is not supported");
}

TEST_F(Checkpoint, MissingKey) { expect_rejected(header({kW}), kWData, "missing key(s) 'n'"); }

TEST_F(Checkpoint, UnexpectedKey) {
  expect_rejected(header({kW, kN, entry("extra", "U8", "[1]", "[40,41]")}), kWData + kNData + "x",
                  "unexpected key(s) 'extra'");
}

TEST_F(Checkpoint, ShapeMismatch) {  // the first tensor is fine: nothing may be written
  expect_rejected(header({kW, entry("n", "I64", "[1,2]", "[24,40]")}), kWData + kNData,
                  "'n': shape mismatch: file has [1, 2], the tensor is [2]");
}

TEST_F(Checkpoint, DtypeMismatch) {
  expect_rejected(header({kW, entry("n", "F64", "[2]", "[24,40]")}), kWData + kNData,
                  "'n': dtype mismatch: file has F64, the tensor is I64");
}

TEST_F(Checkpoint, DuplicateKey) {
  expect_rejected(header({kW, entry("w", "I64", "[2]", "[24,40]")}), kWData + kNData,
                  "key 'w' appears twice in the header");
}

// A repeated key is rejected at every level of the header (the reference parser's rule), not
// only among the tensor names: a lenient parser would keep the last value of each.
TEST_F(Checkpoint, DuplicateKeyAtAnyLevel) {
  // "shape" twice, the last value valid: accepted before (the last one won).
  expect_rejected(
      header({R"("w":{"dtype":"F32","shape":[9],"shape":[2,3],"data_offsets":[0,24]})", kN}),
      kWData + kNData, "key 'shape' appears twice in 'w'");
  expect_rejected(
      header({R"("w":{"dtype":"F32","dtype":"F32","shape":[2,3],"data_offsets":[0,24]})", kN}),
      kWData + kNData, "key 'dtype' appears twice in 'w'");
  expect_rejected(
      header(
          {R"("w":{"data_offsets":[0,4],"dtype":"F32","shape":[2,3],"data_offsets":[0,24]})", kN}),
      kWData + kNData, "key 'data_offsets' appears twice in 'w'");
  expect_rejected(header({R"("__metadata__":{"a":"1","a":"1"})", kW, kN}), kWData + kNData,
                  "key 'a' appears twice in '__metadata__'");
  expect_rejected(header({R"("__metadata__":{})", R"("__metadata__":{})", kW, kN}), kWData + kNData,
                  "key '__metadata__' appears twice in the header");
  // The same key in two different objects is fine.
  write_raw(dir / "ok.safetensors", header({R"("__metadata__":{"shape":"x"})", kW, kN}),
            kWData + kNData);
  Small m;
  load(m, (dir / "ok.safetensors").string());
  EXPECT_EQ(raw_bytes(m.named_parameters()[0].second), kWData);
}

TEST_F(Checkpoint, MalformedEntries) {
  expect_rejected(R"({"w":{"dtype":"F32","data_offsets":[0,24]}})", kWData,
                  "missing field 'shape'");
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24],"x":1}})", kWData,
                  "unexpected field 'x'");
  expect_rejected(R"({"w":{"dtype":"F32","shape":[-2,3],"data_offsets":[0,24]}})", kWData,
                  "not a non-negative integer");
  expect_rejected(header({R"("__metadata__":{"a":1})", kW}), kWData,
                  "value of 'a' is not a string");
}

}  // namespace
