// Malformed safetensors files: one test per kind of problem; each load must throw IOError naming
// the file and the problem and leave the module unchanged.
#include "checkpoint_fixture.h"

namespace {

using namespace ember_checkpoint_test;
using namespace ember;
namespace fs = std::filesystem;

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
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[32,48]}})",
                  kWData + kNData, "run past the end of the data (40 bytes");
}

TEST_F(Checkpoint, OffsetsOverlap) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[16,32]}})",
                  (kWData + kNData).substr(0, 32), "overlap");
}

TEST_F(Checkpoint, OffsetsLeaveAGap) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[32,48]}})",
                  kWData + std::string(8, '\0') + kNData, "belong to no tensor");
}

TEST_F(Checkpoint, OffsetsDoNotCoverTrailingData) {
  expect_rejected(kGoodHeader, kWData + kNData + std::string(8, '\0'), "cover only 40");
}

TEST_F(Checkpoint, OffsetsDisagreeWithShape) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[20,36]}})",
                  (kWData + kNData).substr(0, 36),
                  "hold 20 bytes but shape [2, 3] of F32 needs 24");
}

TEST_F(Checkpoint, OffsetsReversed) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[24,0]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})",
                  kWData + kNData, "end before they begin");
}

TEST_F(Checkpoint, UnknownDtype) {
  expect_rejected(R"({"w":{"dtype":"F17","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})",
                  kWData + kNData, "unknown dtype 'F17'");
}

TEST_F(Checkpoint, UnsupportedDtype) {
  expect_rejected(R"({"w":{"dtype":"F8_E4M3","shape":[2,3],"data_offsets":[0,6]},)"
                  R"("n":{"dtype":"I64","shape":[2],"data_offsets":[6,22]}})",
                  kWData.substr(0, 6) + kNData, "dtype F8_E4M3 is not supported");
}

TEST_F(Checkpoint, MissingKey) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", kWData,
                  "missing key(s) 'n'");
}

TEST_F(Checkpoint, UnexpectedKey) {
  expect_rejected(kGoodHeader.substr(0, kGoodHeader.size() - 1) +
                      R"(,"extra":{"dtype":"U8","shape":[1],"data_offsets":[40,41]}})",
                  kWData + kNData + "x", "unexpected key(s) 'extra'");
}

TEST_F(Checkpoint, ShapeMismatch) {  // the first tensor is fine: nothing may be written
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"I64","shape":[1,2],"data_offsets":[24,40]}})",
                  kWData + kNData, "'n': shape mismatch: file has [1, 2], the tensor is [2]");
}

TEST_F(Checkpoint, DtypeMismatch) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("n":{"dtype":"F64","shape":[2],"data_offsets":[24,40]}})",
                  kWData + kNData, "'n': dtype mismatch: file has F64, the tensor is I64");
}

TEST_F(Checkpoint, DuplicateKey) {
  expect_rejected(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                  R"("w":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})",
                  kWData + kNData, "key 'w' appears twice in the header");
}

// A repeated key is rejected at every level of the header (the reference parser's rule), not
// only among the tensor names: a lenient parser would keep the last value of each.
TEST_F(Checkpoint, DuplicateKeyAtAnyLevel) {
  const std::string n = R"("n":{"dtype":"I64","shape":[2],"data_offsets":[24,40]})";
  // "shape" twice, the last value valid: accepted before (the last one won).
  expect_rejected(
      R"({"w":{"dtype":"F32","shape":[9],"shape":[2,3],"data_offsets":[0,24]},)" + n + "}",
      kWData + kNData, "key 'shape' appears twice in 'w'");
  expect_rejected(
      R"({"w":{"dtype":"F32","dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)" + n + "}",
      kWData + kNData, "key 'dtype' appears twice in 'w'");
  expect_rejected(
      R"({"w":{"data_offsets":[0,4],"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)" + n + "}",
      kWData + kNData, "key 'data_offsets' appears twice in 'w'");
  expect_rejected(R"({"__metadata__":{"a":"1","a":"1"},"w":{"dtype":"F32","shape":[2,3],)"
                  R"("data_offsets":[0,24]},)" +
                      n + "}",
                  kWData + kNData, "key 'a' appears twice in '__metadata__'");
  expect_rejected(R"({"__metadata__":{},"__metadata__":{},"w":{"dtype":"F32","shape":[2,3],)"
                  R"("data_offsets":[0,24]},)" +
                      n + "}",
                  kWData + kNData, "key '__metadata__' appears twice in the header");
  // The same key in two different objects is fine.
  write_raw(dir / "ok.safetensors",
            R"({"__metadata__":{"shape":"x"},"w":{"dtype":"F32","shape":[2,3],)"
            R"("data_offsets":[0,24]},)" +
                n + "}",
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
  expect_rejected(
      R"({"__metadata__":{"a":1},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", kWData,
      "value of 'a' is not a string");
}

}  // namespace
