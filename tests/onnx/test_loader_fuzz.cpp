// Seeded mutation fuzzing of the ONNX loader (issue 38: truncated, bit-flipped, oversized fields),
// as tests/ppo/test_loader_fuzz.cpp fuzzes the safetensors loader.
//
// Seeds: small valid models built in code (initializers in raw data and typed fields, attributes,
// several op families). Each input applies 1-4 stacked mutations to a seed: on the bytes (bit
// flips, interesting bytes, inserted, deleted, duplicated and truncated ranges, a varint replaced
// by the longest one) or on the message (a dim set to a huge or negative value, raw data cut or
// grown, a typed field emptied, an attribute's type or value changed, an element type changed, an
// input renamed). A model that loads is run on the `interp` device with inputs of its declared
// shapes. Every input must be accepted or rejected with an ember::Error; any other exception
// fails the test, a crash or sanitizer report fails the process (`make test-dev` runs this under
// ASan and UBSan). EMBER_FUZZ_INPUTS=N changes the number of inputs (default 5000).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>

#include "ember/ember.h"
#include "ember/onnx/model.h"
#include "model_builder.h"

namespace {

using namespace ember;
using namespace onnx_test;
namespace eo = ember::onnx;
using Rng = std::mt19937_64;

int inputs() {
  if (const char* e = std::getenv("EMBER_FUZZ_INPUTS"); e && std::atoi(e) > 0) return std::atoi(e);
  return 5000;
}

std::vector<ModelBuilder> seeds() {
  std::vector<ModelBuilder> s;
  {
    ModelBuilder b;
    b.input({"x", kF32, {2, 3}}).input({"y", kF32, {3}}).output({"z", kF32, {2, 3}});
    b.initializer("y", {1, 2, 3}, {3});
    b.node("Add", {"x", "y"}, {"t"}, "add");
    b.node("Mul", {"t", "x"}, {"z"}, "mul");
    s.push_back(b);
  }
  {
    ModelBuilder b;
    b.input({"x", kF32, {4}}).output({"z", ::onnx::TensorProto::INT64, {4}});
    auto& c = b.node("Cast", {"x"}, {"i"}, "cast");
    ModelBuilder::attr_int(c, "to", ::onnx::TensorProto::INT64);
    auto* t = b.proto().mutable_graph()->add_initializer();  // typed field, not raw data
    t->set_name("k");
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(4);
    for (int64_t v : {3, -3, 5, 7}) t->add_int64_data(v);
    auto& m = b.node("Mod", {"i", "k"}, {"z"}, "mod");
    ModelBuilder::attr_int(m, "fmod", 1);
    s.push_back(b);
  }
  {
    ModelBuilder b(7);
    b.input({"x", kF32, {2, 2}}).input({"y", kF32, {2, 2}}).output({"z", kF32, {2, 2}});
    b.node("Less", {"x", "y"}, {"c"});
    b.node("Where", {"c", "x", "y"}, {"w"}, "where");
    b.node("Sub", {"w", "y"}, {"z"});
    s.push_back(b);
  }
  return s;
}

void mutate_message(::onnx::ModelProto& m, Rng& rng) {
  auto* g = m.mutable_graph();
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const int64_t extremes[] = {-1, 0, int64_t{1} << 40, INT64_MAX, INT64_MIN, 1 << 20};
  switch (pick(7)) {
    case 0:  // a dim of an initializer
      if (g->initializer_size()) {
        auto* t = g->mutable_initializer(pick(g->initializer_size()));
        if (t->dims_size()) t->set_dims(pick(t->dims_size()), extremes[pick(6)]);
      }
      break;
    case 1:  // raw data cut or grown
      if (g->initializer_size()) {
        auto* t = g->mutable_initializer(pick(g->initializer_size()));
        if (t->has_raw_data()) t->mutable_raw_data()->resize(static_cast<size_t>(pick(40)));
        t->clear_int64_data();
      }
      break;
    case 2:  // an element type
      if (g->initializer_size())
        g->mutable_initializer(pick(g->initializer_size()))->set_data_type(pick(20));
      break;
    case 3:  // an attribute's type or value
      for (auto& n : *g->mutable_node())
        for (auto& a : *n.mutable_attribute()) {
          a.set_type(static_cast<::onnx::AttributeProto::AttributeType>(pick(14)));
          a.set_i(extremes[pick(6)]);
        }
      break;
    case 4:  // an input renamed
      if (g->node_size()) g->mutable_node(pick(g->node_size()))->set_input(0, "renamed");
      break;
    case 5:  // a declared dim
      if (g->input_size()) {
        auto* s = g->mutable_input(pick(g->input_size()))
                      ->mutable_type()
                      ->mutable_tensor_type()
                      ->mutable_shape();
        if (s->dim_size()) s->mutable_dim(pick(s->dim_size()))->set_dim_value(extremes[pick(6)]);
      }
      break;
    default:  // the opset
      m.mutable_opset_import(0)->set_version(extremes[pick(6)] % 40);
      break;
  }
}

void mutate_bytes(std::string& b, Rng& rng) {
  if (b.empty()) return;
  auto pos = [&] { return static_cast<size_t>(rng() % b.size()); };
  switch (rng() % 6) {
    case 0:
      b[pos()] ^= static_cast<char>(1u << (rng() % 8));
      break;
    case 1: {
      const char interesting[] = {0, 1, 0x7f, static_cast<char>(0x80), static_cast<char>(0xff)};
      b[pos()] = interesting[rng() % 5];
      break;
    }
    case 2:
      b.resize(pos());
      break;
    case 3: {
      size_t p = pos(), n = std::min<size_t>(b.size() - p, 1 + rng() % 8);
      b.erase(p, n);
      break;
    }
    case 4: {
      size_t p = pos(), n = std::min<size_t>(b.size() - p, 1 + rng() % 16);
      b.insert(p, b.substr(p, n));
      break;
    }
    default:  // the longest varint (10 bytes) where a byte was
      b.replace(pos(), 1, std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10));
      break;
  }
}

// Loads and, if it loads, runs on interp with inputs of the declared shapes.
void try_input(const std::string& bytes) {
  eo::Model m = eo::load_from_bytes(bytes);
  NamedTensors given;
  for (const auto& i : m.inputs()) {
    if (!i.dtype || !i.shape) return;
    Shape s;
    for (const auto& d : *i.shape) s.push_back(d.value.value_or(2));
    int64_t n = 1;
    for (auto d : s) {
      if (d > 4096) return;  // a huge declared shape is the caller's to give
      n *= std::max<int64_t>(d, 1);
      if (n > 4096) return;
    }
    given.emplace_back(i.name, zeros(s, *i.dtype));
  }
  std::vector<Tensor> outs;
  for (auto& [name, t] : m.run(given)) outs.push_back(t);
  realize(outs);
}

// The inputs accepted and rejected; any exception other than an ember::Error fails the test.
struct Outcomes {
  int accepted = 0, rejected = 0;
  void check(int i, const std::string& bytes) {
    try {
      try_input(bytes);
      accepted++;
    } catch (const Error&) {
      rejected++;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "input " << i << " raised a non-ember exception: " << e.what();
    }
  }
};

TEST(OnnxLoaderFuzz, EveryMutantIsAcceptedOrRejectedWithAnEmberError) {
  Context::get().device = "interp";
  Rng rng(38);
  const std::vector<ModelBuilder> base = seeds();
  Outcomes out;
  for (int i = 0; i < inputs(); i++) {
    ModelBuilder b = base[i % base.size()];
    const int rounds = 1 + static_cast<int>(rng() % 4);
    const bool on_bytes = rng() % 2;
    std::string bytes;
    if (on_bytes) {
      bytes = b.bytes();
      for (int r = 0; r < rounds; r++) mutate_bytes(bytes, rng);
    } else {
      for (int r = 0; r < rounds; r++) mutate_message(b.proto(), rng);
      bytes = b.bytes();
    }
    out.check(i, bytes);
  }
  Context::get().device = "cpu";
  std::printf("onnx loader fuzz: %d inputs, %d accepted, %d rejected\n", inputs(), out.accepted,
              out.rejected);
  EXPECT_GT(out.accepted, 0);
  EXPECT_GT(out.rejected, 0);
}

// Byte mutations of real models from ONNX's backend tests (convolution, recurrent layers, control
// flow with sub-graphs, resize, sequences), when Debian's libonnx-testdata is installed.
TEST(OnnxLoaderFuzz, MutantsOfBackendTestModels) {
  const std::string root = "/usr/share/libonnx-testdata/data/node/";
  std::vector<std::string> seeds;
  for (const char* t :
       {"test_conv_with_strides_and_asymmetric_padding", "test_lstm_with_peepholes", "test_loop11",
        "test_if", "test_scan9_sum", "test_resize_upsample_scales_cubic",
        "test_sequence_map_add_2_sequences", "test_maxpool_with_argmax_2d_precomputed_pads",
        "test_gathernd_example_int32_batch_dim1", "test_einsum_batch_matmul"}) {
    std::ifstream in(root + t + "/model.onnx", std::ios::binary);
    if (!in) continue;
    seeds.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  if (seeds.empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  Context::get().device = "interp";
  Rng rng(1238);
  Outcomes out;
  for (int i = 0; i < inputs() / 5; i++) {
    std::string bytes = seeds[i % seeds.size()];
    const int rounds = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < rounds; r++) mutate_bytes(bytes, rng);
    out.check(i, bytes);
  }
  Context::get().device = "cpu";
  std::printf("onnx loader fuzz, backend-test models: %d inputs, %d accepted, %d rejected\n",
              inputs() / 5, out.accepted, out.rejected);
  EXPECT_GT(out.rejected, 0);
}

// Every prefix of a valid model: each is rejected (or, for the whole file, accepted).
TEST(OnnxLoaderFuzz, EveryTruncation) {
  const std::string good = seeds()[0].bytes();
  for (size_t n = 0; n < good.size(); n++) {
    try {
      eo::load_from_bytes(good.substr(0, n));
    } catch (const Error&) {
    }
  }
  EXPECT_NO_THROW(eo::load_from_bytes(good));
}

}  // namespace
