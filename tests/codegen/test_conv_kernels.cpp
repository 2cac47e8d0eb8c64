// The kernels of a convolution (src/tensor/convolution.cpp), forward and backward, as the scheduler
// makes them (nothing runs): how many, and that the products among them are the register-tiled
// product (on a fixed AVX2 target). Values are the parity tests' (tests/parity ConvPath).
//   - KxK without gradients: the stacked taps in one copy (cols [C K, N L]), one product for the
//     whole batch in im2col's orientation [N L, Cg K] x W^T, then its output permuted to NCHW in
//     the consumer (bias and activation (tanh) beside it); at batch 1 the product stores NCHW
//     with the bias and activation as its epilogue.
//   - KxK with gradients at batch 1: one copy of the stacked taps, then the product with the bias
//     and activation as its epilogue; backward: the taps' gradient product, one kernel summing it
//     back onto the input, the taps again, and the weight gradient product with the bias gradient
//     beside it.
//   - KxK with the weight's gradient at batch > 1: the taps copied channel-major ([C K, N L]), the
//     product with the bias as its epilogue, the activation reading it in NCHW order; backward: the
//     output's gradient copied channel-major, the taps' gradient product, the sum back onto the
//     input, the taps again, the weight gradient product (one reduce axis, N L) with the bias
//     gradient beside it.
//   - 1x1, stride 1, no padding: the product alone, reading the input in place; backward: two
//     products.
//   - depthwise without gradients: one tap sum, after one copy of the padded rows where the input
//     is computed or a buffer padded at stride 1 (and a copy of the input padded to whole rows of
//     the stride first where the stride does not divide a dim); the copy's innermost loop split
//     around its masks, the sum unmasked. A computed input on a small map with a kernel over 3x3:
//     copy and sum channels-last, the copy's masks tested once around its loop over the channels
//     (in blocks of 8 channels, [N, C / 8, *T, 8], where C is a multiple of 8).
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "codegen/kernel_plan.h"
#include "ember/ember.h"
#include "kernel_list.h"
#include "plan_probe.h"

namespace {

using namespace ember;
using codegen::PlanKind;
using test::input;
using test::kernels_of;

// "product", "dot" or "loop" for each kernel of `ts`, in launch order ("product" for either of the
// product renderers: the heuristic takes the dot kernel for small products).
std::vector<std::string> plan_kinds(const std::vector<Tensor>& ts) {
  const codegen::Target t = test::target_of(codegen::Isa::Avx2);
  std::vector<std::string> kinds;
  for (const schedule::Kernel& k : kernels_of(ts)) switch (codegen::plan(k, t).kind()) {
      case PlanKind::Tile:
      case PlanKind::Dot:
        kinds.push_back("product");
        break;
      default:
        kinds.push_back(codegen::plan_kind_name(codegen::plan(k, t).kind()));
    }
  return kinds;
}

using Kinds = std::vector<std::string>;

// The kernel kinds of each convolution of `ys` (no gradients) against `want`.
void expect_kinds(const std::vector<Tensor>& ys, const Kinds& want) {
  for (size_t i = 0; i < ys.size(); i++) EXPECT_EQ(plan_kinds({ys[i]}), want) << "case " << i;
}

// Past 64 output channels (src/tensor/convolution.cpp's windows_product; pixel_major_product
// below that).
TEST(ConvKernels, KxKWithoutGradientsIsOneTapCopyThenOneTiledProduct) {
  NoGradGuard no_grad;
  Tensor x = input({2, 8, 10, 9}), w = input({72, 8, 3, 3}), b = input({72});
  Tensor xe = input({2, 8, 10, 8}), wg = input({72, 2, 3, 3});
  // The stacked taps' copy, the product, the permute with bias and tanh: padded, strided, dilated,
  // 1-D, 3-D. At batch > 1 the product's rows are N L and NCHW keeps N and L apart (the channels
  // lie between), so no one view of the product's output space stores it: the permute stays in
  // the consumer.
  expect_kinds({conv2d(x, w, b, {1}, {1}).tanh(), conv2d(xe, w, b, {2}, {1}).tanh(),
                conv2d(x, w, b, {1}, {2}, {2}).tanh(),
                conv1d(input({2, 8, 12}), input({72, 8, 3}), b, {2}, {1}, {2}).tanh(),
                conv3d(input({2, 8, 4, 6, 6}), input({72, 8, 3, 3, 3}), b, {1}, {1}).tanh()},
               {"loop", "product", "loop"});
  // At batch 1 the product stores NCHW itself, the bias and tanh its epilogue (schedule/lower.cpp,
  // bijective_above): a 3x3 convolution and a residual block's end relu(conv + b + x).
  Tensor x1 = input({1, 72, 10, 9}), wr = input({72, 72, 3, 3}), br = input({72});
  Tensor x8 = input({1, 8, 10, 9});
  expect_kinds({conv2d(x8, w, b, {1}, {1}).tanh(), (conv2d(x1, wr, br, {1}, {1}) + x1).relu()},
               {"loop", "product"});
  // So does a 7x7 stride-2 stem, its taps copied from one phase-major copy of the padded input
  // (convolution.cpp, phase_major): one copy more.
  EXPECT_EQ(plan_kinds({conv2d(input({1, 3, 32, 32}), input({72, 3, 7, 7}), b, {2}, {3}).tanh()}),
            (Kinds{"loop", "loop", "product"}));
  // Grouped: the same, the output's groups then merged into its channels in one more copy.
  EXPECT_EQ(plan_kinds({conv2d(xe, wg, b, {2}, {1}, {1}, 4).tanh()}),
            (Kinds{"loop", "product", "loop", "loop"}));
  // One product over the batch's N L = 2 x 90 rows, not one per image (each repacking W).
  const auto ks = kernels_of({conv2d(x, w, b, {1}, {1})});
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[1].name(), "r_180_72_72");
  // Rows not a multiple of the stride (9): padded to whole rows first, one more copy.
  EXPECT_EQ(plan_kinds({conv2d(x, w, b, {2}, {1}).tanh()}),
            (Kinds{"loop", "loop", "product", "loop"}));
  // A computed input is realized once (here with the padding), not recomputed per tap.
  EXPECT_EQ(plan_kinds({conv2d(x.exp(), w, b, {1}, {1}).tanh()}),
            (Kinds{"loop", "loop", "product", "loop"}));
  // More taps than the renderer unrolls (81 > kMaxConcatAxis): the windows' copies, then the
  // product storing NCHW (batch 1).
  EXPECT_EQ(plan_kinds({conv2d(input({1, 2, 12, 11}), input({3, 2, 9, 9}), {}, {1}, {2})}),
            (Kinds{"loop", "loop", "loop", "product"}));
}

TEST(ConvKernels, KxKWithGradientsIsTheTapsThenOneTiledProductWithItsEpilogue) {
  Tensor x = input({1, 8, 10, 9}), w = input({16, 8, 3, 3}).requires_grad_(), b = input({16});
  Tensor y = conv2d(x, w, b, {1}, {1}).tanh();
  EXPECT_EQ(plan_kinds({y}), (Kinds{"loop", "product"}));
  // Strided: the input viewed as rows of the stride, padded to whole rows first (one copy) where
  // the stride does not divide a dim (9).
  Tensor xe = input({1, 8, 10, 8});
  EXPECT_EQ(plan_kinds({conv2d(xe, w, b, {2}, {1}).tanh()}), (Kinds{"loop", "product"}));
  EXPECT_EQ(plan_kinds({conv2d(x, w, b, {2}, {1}).tanh()}), (Kinds{"loop", "loop", "product"}));
  // Batch 2: channel-major, the activation its own kernel.
  Tensor x2 = input({2, 8, 10, 9});
  EXPECT_EQ(plan_kinds({conv2d(x2, w, b, {1}, {1}).tanh()}), (Kinds{"loop", "product", "loop"}));
  // Only the input's gradient: the output's layout, as at batch 1.
  Tensor xg = input({2, 8, 10, 9}).requires_grad_(), wf = input({16, 8, 3, 3});
  EXPECT_EQ(plan_kinds({conv2d(xg, wf, b, {1}, {1}).tanh()}), (Kinds{"loop", "product"}));
}

TEST(ConvKernels, PointwiseIsOneTiledProduct) {
  Tensor x = input({2, 32, 7, 9}), w = input({24, 32, 1, 1}), b = input({24});
  EXPECT_EQ(plan_kinds({conv2d(x, w, b).tanh()}), (Kinds{"product"}));
}

// What realizing `ts` prints at DEBUG=4: each kernel's C source.
std::string debug4(const std::vector<Tensor>& ts) {
  Context& ctx = Context::get();
  const int old = ctx.debug;
  ctx.debug = 4;
  testing::internal::CaptureStderr();
  realize(ts);
  std::string log = testing::internal::GetCapturedStderr();
  ctx.debug = old;
  return log;
}

// The C function of the kernel whose name ends in `name` ("_E_32_12_10(") in a DEBUG=4 log.
std::string kernel_source(const std::string& log, const std::string& name) {
  const auto at = log.find(name);
  if (at == std::string::npos) return "";
  return log.substr(at, log.find("\n}\n", at) - at);
}

// The sources of a depthwise convolution's copy and tap sum, named as in `log`: each present, the
// sum reading the copy without a mask, (valid ? load : 0).
struct CopyAndSum {
  std::string copy, sum;
};
CopyAndSum copy_and_sum(const std::string& log, const std::string& copy, const std::string& sum) {
  CopyAndSum k{kernel_source(log, copy), kernel_source(log, sum)};
  EXPECT_FALSE(k.copy.empty()) << log;
  EXPECT_FALSE(k.sum.empty()) << log;
  EXPECT_EQ(k.sum.find("?"), std::string::npos) << k.sum;
  return k;
}

// Few input channels at a stride (a network's stem, convolution.cpp's stacked_taps): the input's
// rows copied phase-major first at any kernel size, so that the taps' copy reads unit strides
// along its rows (vectorised), not every second element behind the padding's masks.
TEST(ConvKernels, FewChannelStridedTapsReadThePhases) {
  NoGradGuard no_grad;
  Tensor w = input({16, 3, 3, 3}), b = input({16});
  for (int64_t pad : {1, 0}) {  // 16x16 outputs, 17x17 rows per phase
    const Tensor y = conv2d(input({1, 3, 34 - 2 * pad, 34 - 2 * pad}), w, b, {2}, {pad}).relu();
    EXPECT_EQ(plan_kinds({y}), (Kinds{"loop", "loop", "product"})) << "padding " << pad;
    const auto ks = kernels_of({y});
    ASSERT_EQ(ks.size(), 3u);
    EXPECT_EQ(ks[0].name(), "E_3_2_2_17_17") << "padding " << pad;  // the phases
    const std::string taps = kernel_source(debug4({y}), "_" + ks[1].name() + "(");
    ASSERT_FALSE(taps.empty());
    EXPECT_EQ(taps.find("*2]"), std::string::npos) << taps;  // no stride-2 load
  }
  // Many channels keep the taps as views of x below kMinPhaseTaps taps per phase (72 output
  // channels: windows_product's channel-major columns).
  EXPECT_EQ(
      plan_kinds({conv2d(input({1, 8, 32, 32}), input({72, 8, 3, 3}), input({72}), {2}, {1})}),
      (Kinds{"loop", "product"}));
}

// At most 64 output channels, ungrouped (convolution.cpp's pixel_major_product): the input padded
// channels-last (one copy), the weight's taps outside its channels (one copy), the taps'
// pixel-major columns (one copy, reading whole channel runs: no masks), the product; at batch 1 it
// stores NCHW itself, the bias and tanh its epilogue.
TEST(ConvKernels, KxKIntoFewChannelsCopiesPixelMajorColumns) {
  NoGradGuard no_grad;
  Tensor x = input({1, 8, 10, 9}), w = input({16, 8, 3, 3}), b = input({16});
  const Kinds one = {"loop", "loop", "loop", "product"};
  // Padded, strided over rows that are no multiple of the stride (the padding copy runs on to
  // whole strides: no copy more), dilated, a computed input (computed in the padding copy), 1-D.
  expect_kinds({conv2d(x, w, b, {1}, {1}).tanh(), conv2d(x, w, b, {2}, {1}).tanh(),
                conv2d(x, w, b, {1}, {2}, {2}).tanh(), conv2d(x.exp(), w, b, {1}, {1}).tanh(),
                conv1d(input({1, 8, 12}), input({16, 8, 3}), b, {2}, {1}, {2}).tanh()},
               one);
  const auto ks = kernels_of({conv2d(x, w, b, {1}, {1})});
  ASSERT_EQ(ks.size(), 4u);
  const std::string taps =
      kernel_source(debug4({conv2d(x, w, b, {1}, {1})}), "_" + ks[1].name() + "(");
  ASSERT_FALSE(taps.empty());
  // No padding mask in the taps' copy (the concatenated taps' conditions are on j2 alone).
  EXPECT_EQ(taps.find("(o0 >= "), std::string::npos) << taps;
  EXPECT_EQ(taps.find("(o1 >= "), std::string::npos) << taps;
  EXPECT_NE(taps.find("(o2*9 + j2) >= 4"), std::string::npos) << taps;
  EXPECT_EQ(ks[3].name(), "r_90_16_72");
  // At batch 2 too: a product per image (batched, the small weight packed for each), each storing
  // its image's NCHW rows, where one product over the batch's rows needed the permute in its
  // consumer (windows_product above).
  const Tensor y2 = conv2d(input({2, 8, 10, 9}), w, b, {1}, {1}).tanh();
  EXPECT_EQ(plan_kinds({y2}), one);
  EXPECT_EQ(kernels_of({y2})[3].name(), "r_2_90_16_72");
}

// Their values against the path with the weight's gradient (the taps as views of x, no phases):
// both paddings, a dilated kernel over odd sizes at batch 2.
TEST(ConvKernels, FewChannelStridedTapsValues) {
  Tensor w = input({16, 3, 3, 3}), b = input({16});
  for (const auto& [xs, pad, dil] : std::vector<std::tuple<Shape, int64_t, int64_t>>{
           {{1, 3, 32, 32}, 1, 1}, {{1, 3, 34, 34}, 0, 1}, {{2, 3, 31, 15}, 2, 2}}) {
    Tensor x = input(xs), y;
    {
      NoGradGuard no_grad;
      y = conv2d(x, w, b, {2}, {pad}, {dil});
    }
    Tensor ref = conv2d(x, w.detach().requires_grad_(), b, {2}, {pad}, {dil});
    auto got = y.to_vector<float>(), want = ref.to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
  }
}

TEST(ConvKernels, DepthwiseWithoutGradientsIsACopyThenOneTapSum) {
  NoGradGuard no_grad;
  Tensor x = input({2, 16, 12, 10}), w = input({16, 1, 3, 3}), b = input({16});
  // A buffer padded at stride 1: its padded rows copied once, then the tap sum.
  EXPECT_EQ(kernels_of({conv2d(x, w, b, {1}, {1}, {1}, 16).tanh()}).size(), 2u);
  // Unpadded: the taps are views of the buffer. So at a stride (the gathers of a copy cost more).
  EXPECT_EQ(kernels_of({conv2d(x, w, b, {1}, {0}, {1}, 16).tanh()}).size(), 1u);
  EXPECT_EQ(kernels_of({conv2d(x, w, b, {2}, {1}, {1}, 16).tanh()}).size(), 1u);
  Tensor xo = input({2, 16, 11, 10});  // 11 rows: padded to whole rows of the stride first
  EXPECT_EQ(kernels_of({conv2d(xo, w, b, {2}, {1}, {1}, 16).tanh()}).size(), 2u);
  // A computed input: copied once with its producer, at any stride, not computed per tap. A 5x5
  // on a map up to 56x56 channels-last: the weight as [K, C] too, and (realized here) the output
  // back to NCHW. With 16 channels, in blocks of 8: the output copied back to NCHW, and realized
  // as a root, copied once more (a view of that copy).
  EXPECT_EQ(kernels_of({conv2d(x.tanh(), w, b, {2}, {1}, {1}, 16)}).size(), 2u);
  EXPECT_EQ(kernels_of({conv2d(x.tanh(), w, b, {1}, {0}, {1}, 16)}).size(), 2u);
  Tensor x12 = input({2, 12, 12, 10}), b12 = input({12});
  EXPECT_EQ(kernels_of({conv2d(x12.tanh(), input({12, 1, 5, 5}), b12, {2}, {2}, {1}, 12)}).size(),
            4u);
  EXPECT_EQ(kernels_of({conv2d(x.tanh(), input({16, 1, 5, 5}), b, {2}, {2}, {1}, 16)}).size(), 5u);
  Tensor xl = input({1, 16, 60, 58});  // 60x58 positions: channel-major
  EXPECT_EQ(kernels_of({conv2d(xl.tanh(), w, b, {2}, {1}, {1}, 16)}).size(), 2u);
}

// Channel-major (a map over 56x56 positions): the copy's innermost loop in three, its unmasked
// middle a loop of its own, the rows' masks tested once around it; the tap sum reads the copy
// without a mask.
TEST(ConvKernels, DepthwiseTapSumReadsItsCopyUnmasked) {
  NoGradGuard no_grad;
  Tensor x = input({2, 16, 60, 58}), w = input({16, 1, 3, 3}), b = input({16});
  const std::string log = debug4({conv2d(x.tanh(), w, b, {1}, {1}, {1}, 16)});
  const auto [copy, sum] = copy_and_sum(log, "_E_32_62_60(", "_E_2_16_");
  EXPECT_EQ(sum.find("tanhf("), std::string::npos) << sum;
  EXPECT_NE(copy.find("tanhf("), std::string::npos) << copy;  // the producer, in the copy
  const auto rows = copy.find("if (o1 >= 1 && o1 < 61) {");
  ASSERT_NE(rows, std::string::npos) << copy;
  const auto middle = copy.find("for (int64_t o2 = 1; o2 < 59; o2++) {", rows);
  ASSERT_NE(middle, std::string::npos) << copy;
  const std::string inner = copy.substr(middle, copy.find("for (", middle + 1) - middle);
  EXPECT_EQ(inner.find("?"), std::string::npos) << inner;  // no mask on o2 nor o1 in there
  const auto other = copy.find("} else {", middle);        // the rows outside: their masks kept
  ASSERT_NE(other, std::string::npos) << copy;
  EXPECT_NE(copy.find("(o1 >= 1 && o1 < 61)", other), std::string::npos) << copy;
  EXPECT_NE(copy.find("for (int64_t o2 = 0; o2 < 1; o2++) {"), std::string::npos) << copy;
  EXPECT_NE(copy.find("for (int64_t o2 = 59; o2 < 60; o2++) {"), std::string::npos) << copy;
}

// At a stride, rows of the stride shorter than 16: the copy runs along whole padded rows (x padded,
// then viewed as rows of the stride), its innermost loop the row's columns, unmasked between the
// padding's ends; not along the stride's phases (a loop of 2, masked throughout). Longer rows:
// the copy phase-major, the tap sum reading it unmasked.
TEST(ConvKernels, DepthwiseStridedCopyRunsAlongWholeRows) {
  NoGradGuard no_grad;
  Tensor x = input({1, 16, 60, 26}), w = input({16, 1, 3, 3}), b = input({16});
  const std::string log = debug4({conv2d(x.tanh(), w, b, {2}, {1}, {1}, 16)});
  const std::string copy = kernel_source(log, "_E_16_62_28(");
  ASSERT_FALSE(copy.empty()) << log;
  const auto middle = copy.find("for (int64_t o2 = 2; o2 < 28; o2++) {");
  ASSERT_NE(middle, std::string::npos) << copy;
  const std::string inner = copy.substr(middle, copy.find("}", middle) - middle);
  EXPECT_EQ(inner.find("?"), std::string::npos) << inner;
  EXPECT_NE(inner.find("tanhf("), std::string::npos) << inner;

  Tensor xw = input({1, 16, 60, 58});
  const std::string wide = debug4({conv2d(xw.tanh(), w, b, {2}, {1}, {1}, 16)});
  const auto [phases, sum] = copy_and_sum(wide, "_E_16_2_2_31_30(", "_E_16_30_29(");
  EXPECT_NE(phases.find("tanhf("), std::string::npos) << phases;
  EXPECT_NE(sum.find("o2*1]"), std::string::npos) << sum;  // unit strides along the row
}

// A channels-last or blocked copy's source: the padding's masks tested once, `test`, around its
// innermost loop, which computes the producer (tanh) without a mask where the test holds; the
// other positions keep their masks.
void expect_masks_tested_once(const std::string& copy, const std::string& test) {
  const auto at = copy.find(test);
  ASSERT_NE(at, std::string::npos) << copy;
  const std::string held = copy.substr(at, copy.find("} else {", at) - at);
  EXPECT_EQ(held.find("?"), std::string::npos) << held;
  EXPECT_NE(held.find("tanhf("), std::string::npos) << held;
  EXPECT_NE(copy.substr(at).find("?"), std::string::npos) << copy;
}

// Channels-last (a 5x5 on a small map, channels no multiple of 8): the copy tests its padded rows
// and columns once around its innermost loop (the channels), which is unmasked where they hold; the
// tap sum runs along the channels without a mask.
TEST(ConvKernels, DepthwiseChannelsLastTestsItsMasksOnce) {
  NoGradGuard no_grad;
  Tensor x = input({2, 12, 12, 10}), w = input({12, 1, 5, 5}), b = input({12});
  const std::string log = debug4({conv2d(x.tanh(), w, b, {1}, {2}, {1}, 12)});
  const auto [copy, sum] = copy_and_sum(log, "_E_2_16_14_12(", "_E_2_12_10_12(");
  EXPECT_NE(sum.find("for (int64_t o3 = 0; o3 < 12; o3++) {"), std::string::npos) << sum;
  expect_masks_tested_once(copy, "if (o1 >= 2 && o1 < 14 && o2 >= 2 && o2 < 12) {");
}

// Channels in blocks of 8 (a multiple of 8 channels): the copy [N, C / 8, *T, 8] tests its padded
// rows and columns once around its innermost loop (a block's 8 channels) and computes the producer;
// the tap sum's innermost loop is those 8 channels, unmasked; its output copied back to NCHW.
TEST(ConvKernels, DepthwiseBlockedSumRunsAlongABlock) {
  NoGradGuard no_grad;
  Tensor x = input({2, 16, 12, 10}), w = input({16, 1, 5, 5}), b = input({16});
  const std::string log = debug4({conv2d(x.tanh(), w, b, {1}, {2}, {1}, 16)});
  const auto [copy, sum] = copy_and_sum(log, "_E_4_16_14_8(", "_E_2_2_12_10_8(");
  EXPECT_NE(sum.find("for (int64_t o4 = 0; o4 < 8; o4++) {"), std::string::npos) << sum;
  EXPECT_EQ(sum.find("tanhf("), std::string::npos) << sum;
  expect_masks_tested_once(copy, "if (o1 >= 2 && o1 < 14 && o2 >= 2 && o2 < 12) {");
  EXPECT_FALSE(kernel_source(log, "_E_4_8_120(").empty()) << log;  // back to NCHW
}

TEST(ConvKernels, BackwardRunsItsProductsTiled) {
  Tensor x = input({1, 8, 10, 9}).requires_grad_(), w = input({16, 8, 3, 3}).requires_grad_();
  Tensor b = input({16}).requires_grad_();
  Tensor y = conv2d(x, w, b, {1}, {1});
  auto g = autograd::grad({y}, {x, w, b}, {input(y.sizes())});
  EXPECT_EQ(plan_kinds(g), (Kinds{"product", "loop", "loop", "product"}));

  Tensor x1 = input({1, 32, 7, 9}).requires_grad_(), w1 = input({24, 32, 1, 1}).requires_grad_();
  Tensor y1 = conv2d(x1, w1);
  EXPECT_EQ(plan_kinds(autograd::grad({y1}, {x1, w1}, {input(y1.sizes())})),
            (Kinds{"product", "product"}));
}

// At batch > 1 the weight's gradient sums over N and the output positions: one reduce axis in the
// channel-major layout, so a product (and the bias's gradient beside it), not a loop kernel.
TEST(ConvKernels, BatchedBackwardRunsItsProductsTiled) {
  Tensor x = input({4, 8, 10, 9}).requires_grad_(), w = input({16, 8, 3, 3}).requires_grad_();
  Tensor b = input({16}).requires_grad_();
  Tensor y = conv2d(x, w, b, {1}, {1});
  auto g = autograd::grad({y}, {x, w, b}, {input(y.sizes())});
  EXPECT_EQ(plan_kinds(g), (Kinds{"loop", "product", "loop", "loop", "product"}));
  // 1x1: the output's gradient copied channel-major, the input's gradient product, copied back to
  // NCHW, x copied channel-major, the weight's gradient product.
  Tensor x1 = input({3, 32, 7, 9}).requires_grad_(), w1 = input({24, 32, 1, 1}).requires_grad_();
  Tensor y1 = conv2d(x1, w1);
  EXPECT_EQ(plan_kinds(autograd::grad({y1}, {x1, w1}, {input(y1.sizes())})),
            (Kinds{"loop", "product", "loop", "loop", "product"}));
}

TEST(ConvKernels, DepthwiseBackwardIsBounded) {
  Tensor x = input({2, 16, 12, 10}).requires_grad_(), w = input({16, 1, 3, 3}).requires_grad_();
  Tensor y = conv2d(x, w, {}, {2}, {1}, {1}, 16);
  // The stacked taps (channel-major), their sum with the weight, the output in NCHW order.
  EXPECT_EQ(kernels_of({y}).size(), 3u);
  // The output's gradient copied channel-major, the taps' gradients, summed in the input's
  // rows-of-the-stride layout, that sum copied into the input's gradient (the scheduler
  // materialises a sum of padded views under a reshape), the taps again, the weight's gradient.
  auto g = autograd::grad({y}, {x, w}, {input(y.sizes())});
  EXPECT_EQ(kernels_of(g).size(), 6u);
}

// y = conv2d(x, w, b, padding 1) against the same convolution without gradients (the windows'
// path: no stacked taps).
void expect_windows_values(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y) {
  Tensor ref;
  {
    NoGradGuard no_grad;
    ref = conv2d(x, w, b, {1}, {1});
  }
  auto got = y.to_vector<float>(), want = ref.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
}

// `st`, the stack of `parts` (equal shapes) along a dim with `outer` elements before it: each
// element copied exactly, st[i, k, j] = parts[k][i, j].
void expect_stacked(const std::vector<Tensor>& parts, const Tensor& st, size_t outer) {
  auto sv = st.to_vector<float>();
  const size_t inner = static_cast<size_t>(parts[0].numel()) / outer, n = parts.size();
  for (size_t k = 0; k < n; k++) {
    auto pv = parts[k].to_vector<float>();
    for (size_t i = 0; i < outer; i++)
      for (size_t j = 0; j < inner; j++)
        ASSERT_EQ(sv[(i * n + k) * inner + j], pv[i * inner + j]) << k << "," << i << "," << j;
  }
}

// The stacked taps' copy is a sum of pieces, each a load masked to its own tap: the heuristic
// unrolls the tap axis whole, so that each unrolled copy's masks fold and it loads its own tap
// only (plan_heuristic.cpp's cat_axis). Its values against the windows' path (no gradients).
TEST(ConvKernels, StackedTapsUnrollTheTapAxis) {
  Tensor x = input({2, 8, 10, 9}), w = input({16, 8, 3, 3}).requires_grad_(), b = input({16});
  Tensor y = conv2d(x, w, b, {1}, {1});
  std::string log = test::debug3(y);
  auto at = log.find("kernel E_8_9_2_");
  ASSERT_NE(at, std::string::npos) << log;
  auto from = log.find("opts:", at);
  ASSERT_NE(from, std::string::npos) << log;
  EXPECT_NE(log.substr(from, log.find('\n', from) - from).find("UPCAST(1,9)"), std::string::npos)
      << log;
  expect_windows_values(x, w, b, y);
  // A plain stack: three pieces along axis 1, each element copied exactly.
  Tensor p = input({4, 5, 6}), q = input({4, 5, 6}), r = input({4, 5, 6});
  Tensor st = stack({p, q, r}, 1);
  std::string slog = test::debug3(st);
  auto sat = slog.find("kernel E_4_3_30 ");
  ASSERT_NE(sat, std::string::npos) << slog;
  EXPECT_NE(slog.find("UPCAST(1,3)", sat), std::string::npos) << slog;
  expect_stacked({p, q, r}, st, 4);
}

// With one input channel the taps are the copy's axis 0, the thread pool's: the renderer
// switches over it, each case its own loops with the tap a constant (render_c.cpp), where an
// unroll would leave one unit of work. Values against the windows' path, and a stack along dim 0
// copied exactly.
TEST(ConvKernels, StackedTapsOnAxisZeroSwitchOverTheTap) {
  Tensor x = input({2, 1, 7, 6}), w = input({4, 1, 3, 3}).requires_grad_(), b = input({4});
  Tensor y = conv2d(x, w, b, {1}, {1});
  std::string log = debug4({y});
  auto at = log.find("_E_9_2_");
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_NE(log.find("switch (o0)", at), std::string::npos) << log.substr(at, 2000);
  expect_windows_values(x, w, b, y);
  Tensor p = input({4, 5, 6}), q = input({4, 5, 6}), r = input({4, 5, 6});
  expect_stacked({p, q, r}, stack({p, q, r}, 0), 1);
}

}  // namespace
