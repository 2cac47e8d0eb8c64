// Kernel plans (codegen/kernel_plan.h): the kind the heuristic picks for representative kernels at
// every ISA level (fixed caches, so not the machine's), legal() against plans broken one field at
// a time, render_c's refusal of an illegal plan, and the neighbours: legal, distinct, each the
// change its action names. The plans' values are checked in test_plan_neighbours.cpp.
#include <gtest/gtest.h>

#include <set>

#include "codegen/kernel_plan.h"
#include "codegen/plan_heuristic.h"
#include "codegen/render_c.h"
#include "kernel_list.h"

namespace {

using namespace ember;
using codegen::Isa;
using codegen::KernelPlan;
using codegen::PlanKind;
using test::kernel_named;
using test::target_of;

Tensor input(IntList shape) {
  Tensor t = randn(shape);
  t.realize();
  return t;
}

// The representative kernels, built once.
struct Kernels {
  schedule::Kernel elementwise, column_sum, column_split, row_sum, product, linear, weight_grad,
      weight_grad_bias, short_reduce, norms;
};

const Kernels& kernels() {
  static const Kernels k = [] {
    manual_seed(1);
    Kernels r;
    Tensor a = input({100, 37}), b = input({100, 37});
    r.elementwise = kernel_named({(a + b).tanh()}, "E_3700");
    r.column_sum = kernel_named({input({1000, 128}).sum({0})}, "r_128_1000");
    r.column_split = kernel_named({input({10000, 128}).sum({0})}, "r_128_10000");
    r.row_sum = kernel_named({input({1000, 128}).sum({1})}, "r_1000_128");
    Tensor x = input({10000, 128}), w = input({128, 128}), dz = input({10000, 128});
    r.product = kernel_named({matmul(x, w)}, "r_10000_128_128");
    r.linear = kernel_named({matmul(input({4, 128}), w.t())}, "r_4_128_128");
    r.weight_grad = kernel_named({matmul(x.t(), dz)}, "r_128_128_10000");
    r.weight_grad_bias = kernel_named({matmul(dz.t(), x), dz.sum({0})}, "r_128_128_10000");
    Tensor h = input({1000, 128});
    r.short_reduce =
        kernel_named({matmul(input({1000, 2}), input({2, 128})) * (1 - h * h)}, "r_1000_128_2");
    Tensor n = (a * a).sum() + (input({50}) * input({50})).sum() + (x * x).sum();
    for (schedule::Kernel& k : test::kernels_of({n}))
      if (!schedule::kernel_nests(k).empty()) r.norms = k;
    return r;
  }();
  return k;
}

TEST(KernelPlan, KindsOfRepresentativeKernels) {
  const Kernels& k = kernels();
  for (Isa isa : test::all_isas()) {
    SCOPED_TRACE(codegen::isa_name(isa));
    const codegen::Target t = target_of(isa);
    auto kind = [&](const schedule::Kernel& kernel) {
      const KernelPlan p = codegen::plan(kernel, t);
      EXPECT_EQ(p.illegal(kernel, t), "") << kernel.name() << ": " << p.str();
      return p.kind();
    };
    EXPECT_EQ(kind(k.elementwise), PlanKind::Loop);
    EXPECT_EQ(codegen::plan(k.elementwise, t).str(), "");  // plain loops: no DEBUG=3 line
    EXPECT_EQ(kind(k.column_sum), PlanKind::Loop);
    EXPECT_GT(std::get<codegen::LoopPlan>(codegen::plan(k.column_sum, t).layout).upcast[0], 1);
    EXPECT_EQ(kind(k.column_split), PlanKind::ColumnSplit);
    EXPECT_EQ(codegen::plan(k.column_split, t).str(),
              "column_split: UPCAST(0,128) SPLIT_REDUCE(1,1024)");
    EXPECT_EQ(kind(k.row_sum), PlanKind::Loop);
    EXPECT_GT(std::get<codegen::LoopPlan>(codegen::plan(k.row_sum, t).layout).unroll, 1);
    EXPECT_EQ(kind(k.product), PlanKind::Tile);
    EXPECT_EQ(codegen::plan(k.product, t).str().rfind("tile: UPCAST(0,", 0), 0u);
    EXPECT_EQ(kind(k.linear), PlanKind::Dot);
    EXPECT_EQ(kind(k.weight_grad), PlanKind::Tile);
    EXPECT_GT(std::get<codegen::TilePlan>(codegen::plan(k.weight_grad, t).layout).split_k, 0);
    ASSERT_EQ(k.weight_grad_bias.more_outputs.size(), 1u);  // the bias sums beside the product
    EXPECT_EQ(kind(k.weight_grad_bias), PlanKind::Tile);    // row sums: never the dot kernel
    EXPECT_EQ(kind(k.short_reduce), PlanKind::Loop);
    ASSERT_TRUE(k.norms.value) << "no kernel with nests";
    EXPECT_EQ(kind(k.norms), PlanKind::Loop);
    const size_t nests = std::get<codegen::LoopPlan>(codegen::plan(k.norms, t).layout).nests.size();
    EXPECT_EQ(nests, schedule::kernel_nests(k.norms).size());
    EXPECT_GE(nests, 2u);
  }
}

// A copy of `p`'s layout of type L, changed by `change`.
template <typename L, typename F>
KernelPlan changed(const KernelPlan& p, F change) {
  L l = std::get<L>(p.layout);
  change(l);
  return KernelPlan{l};
}

void expect_illegal(const schedule::Kernel& k, const codegen::Target& t, const KernelPlan& p,
                    const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_FALSE(p.legal(k, t)) << p.str();
  EXPECT_NE(p.illegal(k, t), "");
  if (!p.illegal(k).empty()) {
    EXPECT_THROW(codegen::render_c(k, p, "f"), Error) << p.str();
  }
}

TEST(KernelPlan, LegalRejectsBrokenTilePlans) {
  const Kernels& k = kernels();
  const codegen::Target avx2 = target_of(Isa::Avx2);
  const KernelPlan p = codegen::plan(k.product, avx2);
  ASSERT_EQ(p.kind(), PlanKind::Tile);
  const auto& tp = std::get<codegen::TilePlan>(p.layout);
  ASSERT_GT(tp.tile_rows, 1);
  using codegen::TilePlan;
  const auto& kp = k.product;
  expect_illegal(kp, avx2, changed<TilePlan>(p, [](TilePlan& l) { l.tile_cols += 1; }),
                 "columns not a multiple of the lanes");
  expect_illegal(kp, avx2, changed<TilePlan>(p, [](TilePlan& l) { l.block_rows += 1; }),
                 "row blocks not a multiple of the tile");
  expect_illegal(kp, avx2, changed<TilePlan>(p, [](TilePlan& l) { l.block_k = 128; }),
                 "a reduce block of the whole reduce");
  expect_illegal(kp, avx2, changed<TilePlan>(p, [](TilePlan& l) { l.block_k = 0, l.split_k = 64; }),
                 "split-K without reduce blocks");
  expect_illegal(
      kp, avx2,
      changed<TilePlan>(
          p, [](TilePlan& l) { l.block_k = 64, l.split_k = 128, l.block_cols = l.tile_cols; }),
      "column blocks with split-K");
  expect_illegal(kp, avx2,
                 changed<TilePlan>(p, [](TilePlan& l) { l.tile_rows = 9, l.block_rows = 9 * 20; }),
                 "nine row pointers");
  expect_illegal(kp, avx2,
                 changed<TilePlan>(p,
                                   [](TilePlan& l) {
                                     l.tile_rows = 8, l.tile_cols = 24, l.block_rows = 80,
                                     l.pack_cols = true;
                                   }),
                 "24 accumulators in 16 registers");
  expect_illegal(kp, target_of(Isa::Avx512), p, "avx2's lanes on an avx512 target");
  expect_illegal(k.elementwise, avx2, p, "a tile plan of an elementwise kernel");
  // x @ W^T past the dot kernel's batch: W^T is not contiguous along the columns.
  Tensor xt = matmul(input({100, 128}), input({128, 128}).t());
  const schedule::Kernel transposed = kernel_named({xt}, "r_100_128_128");
  const KernelPlan pt = codegen::plan(transposed, avx2);
  ASSERT_EQ(pt.kind(), PlanKind::Tile);
  expect_illegal(transposed, avx2, changed<TilePlan>(pt, [](TilePlan& l) { l.pack_cols = false; }),
                 "W^T read in place");
  // A packed panel of 9999 x 128 floats: 5 MB of stack.
  const KernelPlan pw = codegen::plan(k.weight_grad, avx2);
  expect_illegal(k.weight_grad, avx2,
                 changed<TilePlan>(
                     pw, [](TilePlan& l) { l.pack_cols = true, l.block_k = 9999, l.split_k = 0; }),
                 "a panel larger than the stack allows");
  const codegen::Target scalar = target_of(Isa::Scalar);
  const KernelPlan ps = codegen::plan(k.product, scalar);
  expect_illegal(kp, scalar, changed<TilePlan>(ps, [](TilePlan& l) { l.hold = true; }),
                 "held vectors without vectors");
  expect_illegal(
      kp, scalar,
      changed<TilePlan>(ps, [](TilePlan& l) { l.row_panel = codegen::RowPanel::Broadcast; }),
      "a broadcast panel without vectors");
}

TEST(KernelPlan, LegalRejectsBrokenDotLoopAndSplitPlans) {
  const Kernels& k = kernels();
  const codegen::Target t = target_of(Isa::Avx2);
  using codegen::ColumnSplitPlan;
  using codegen::DotPlan;
  using codegen::LoopPlan;
  const KernelPlan d = codegen::plan(k.linear, t);
  ASSERT_EQ(d.kind(), PlanKind::Dot);
  expect_illegal(k.linear, t, changed<DotPlan>(d, [](DotPlan& l) { l.lanes = 3; }), "three lanes");
  expect_illegal(k.linear, t,
                 changed<DotPlan>(d, [](DotPlan& l) { l.tile_rows = 3, l.block_rows = 4; }),
                 "row blocks not a multiple of the tile");
  expect_illegal(k.weight_grad_bias, t, KernelPlan{DotPlan{0, 1, 2, 8, 2, 2, 128, false}},
                 "the dot kernel beside row sums");

  const KernelPlan r = codegen::plan(k.row_sum, t);  // [1000, 128] summed along 128
  ASSERT_EQ(r.kind(), PlanKind::Loop);
  expect_illegal(k.row_sum, t, changed<LoopPlan>(r, [](LoopPlan& l) { l.upcast[0] = 3; }),
                 "an upcast that does not divide its axis");
  expect_illegal(k.row_sum, t, changed<LoopPlan>(r, [](LoopPlan& l) { l.upcast[1] = 2; }),
                 "an upcast of the reduce axis");
  expect_illegal(k.row_sum, t, changed<LoopPlan>(r, [](LoopPlan& l) { l.unroll = 3; }),
                 "an unroll that does not divide the reduce");
  expect_illegal(k.row_sum, t, changed<LoopPlan>(r, [](LoopPlan& l) { l.upcast.pop_back(); }),
                 "upcasts of the wrong rank");
  expect_illegal(k.row_sum, t,
                 changed<LoopPlan>(r, [](LoopPlan& l) { l.upcast[0] = 1000, l.unroll = 2; }),
                 "2000 elements a step");
  expect_illegal(k.elementwise, t, KernelPlan{LoopPlan{{1}, 2, {}}}, "an unroll without reduce");
  const KernelPlan n = codegen::plan(k.norms, t);
  expect_illegal(k.norms, t, changed<LoopPlan>(n, [](LoopPlan& l) { l.nests.pop_back(); }),
                 "a nest without its plan");

  const KernelPlan c = codegen::plan(k.column_split, t);
  ASSERT_EQ(c.kind(), PlanKind::ColumnSplit);
  expect_illegal(k.column_split, t, KernelPlan{ColumnSplitPlan{128, 768}}, "slices of 3 blocks");
  expect_illegal(k.column_split, t, KernelPlan{ColumnSplitPlan{100, 1024}},
                 "columns that do not divide 128");
  expect_illegal(k.column_split, t, KernelPlan{ColumnSplitPlan{128, 16384}}, "one slice");
  expect_illegal(k.row_sum, t, KernelPlan{ColumnSplitPlan{1000, 256}}, "a split of 128 rows");
}

// Every neighbour of the heuristic's plan is legal, renders, differs from the plan and from the
// other neighbours, and is the change its action names.
TEST(KernelPlan, NeighboursAreLegalDistinctAndNamed) {
  const Kernels& k = kernels();
  for (Isa isa : test::all_isas()) {
    SCOPED_TRACE(codegen::isa_name(isa));
    const codegen::Target t = target_of(isa);
    for (const schedule::Kernel* kernel :
         {&k.elementwise, &k.column_sum, &k.column_split, &k.row_sum, &k.product, &k.linear,
          &k.weight_grad, &k.weight_grad_bias, &k.short_reduce, &k.norms}) {
      SCOPED_TRACE(kernel->name());
      const KernelPlan p = codegen::plan(*kernel, t);
      const auto moves = p.neighbours(*kernel, t);
      EXPECT_FALSE(moves.empty()) << p.str();
      std::set<std::string> seen = {p.str()};
      std::set<PlanKind> kinds;
      for (const codegen::Move& m : moves) {
        EXPECT_EQ(m.plan.illegal(*kernel, t), "") << m.action.str() << " " << m.plan.str();
        EXPECT_TRUE(seen.insert(m.plan.str()).second) << m.action.str() << " " << m.plan.str();
        EXPECT_NO_THROW(codegen::render_c(*kernel, m.plan, "f")) << m.plan.str();
        kinds.insert(m.plan.kind());
        if (m.action.kind == codegen::ActionKind::Kind) {
          EXPECT_EQ(m.plan.kind(), static_cast<PlanKind>(m.action.amount));
        } else {
          EXPECT_EQ(m.plan.kind(), p.kind()) << m.action.str();
          // The action's words are in the plan's line (not a move that turns an action off,
          // nor a loop's upcast or unroll back to 1).
          const bool off =
              m.action.amount == 0 || (p.kind() == PlanKind::Loop && m.action.amount == 1);
          if (!off && m.action.nest < 0) {
            EXPECT_NE(m.plan.str().find(m.action.str()), std::string::npos)
                << m.action.str() << " " << m.plan.str();
          }
        }
      }
      // A kernel may become each kind that renders it.
      const bool to_loop = kernel == &k.product || kernel == &k.column_split;
      EXPECT_TRUE(!to_loop || kinds.count(PlanKind::Loop));
      EXPECT_TRUE(kernel != &k.linear || kinds.count(PlanKind::Tile));
      EXPECT_TRUE(kernel != &k.linear || kinds.count(PlanKind::Loop));
    }
  }
}

// The tiled product's neighbours cover its layout: the register tile both ways, the reduce
// blocks, the row blocks (one unit of work among them), packing, the loop order, split-K.
TEST(KernelPlan, TileNeighboursVaryEveryField) {
  const Kernels& k = kernels();
  const codegen::Target t = target_of(Isa::Avx2);
  const KernelPlan p = codegen::plan(k.product, t);
  const auto& tp = std::get<codegen::TilePlan>(p.layout);
  std::set<std::string> actions;
  bool one_unit = false;
  for (const codegen::Move& m : p.neighbours(k.product, t)) {
    std::string a = m.action.str();
    actions.insert(a.substr(0, a.find('(')));
    if (m.plan.kind() == PlanKind::Tile && m.plan.units(k.product) == 1) one_unit = true;
  }
  for (const char* a : {"UPCAST", "PACK", "BLOCK_REDUCE", "BLOCK_OUTER", "SPLIT_REDUCE",
                        "COLS_OUTER", "HOLD", "KIND"})
    EXPECT_TRUE(actions.count(a)) << a << " " << p.str();
  EXPECT_TRUE(one_unit) << p.str();
  EXPECT_GT(p.units(k.product), 1) << tp.block_rows;
}

// The heuristic's tile sizes its panels to the caches, not to the stack: many rows of 16 columns
// with a computed row operand (x * y: a scalar row panel of its row block) beside a 2 MiB L2
// would take more than 4 MiB of stack. plan() halves the row blocks until the tile is legal.
TEST(KernelPlan, HeuristicTileFitsTheStack) {
  const codegen::Target t = codegen::make_target(Isa::Avx2, 32 << 10, 2 << 20, 32 << 20);
  const schedule::Kernel k = kernel_named(
      {matmul(input({20000, 1024}) * input({20000, 1024}), input({1024, 16}))}, "r_20000_16_1024");
  const auto p = codegen::tile_operands(k);
  ASSERT_TRUE(p);
  const KernelPlan cached{codegen::tile_plan(k, *p, t)};
  EXPECT_NE(cached.illegal(k, t).find("bytes of local buffers"), std::string::npos) << cached.str();
  const KernelPlan fitted = codegen::plan(k, t);
  ASSERT_EQ(fitted.kind(), PlanKind::Tile) << fitted.str();
  EXPECT_EQ(fitted.illegal(k, t), "");
  EXPECT_LT(std::get<codegen::TilePlan>(fitted.layout).block_rows,
            std::get<codegen::TilePlan>(cached.layout).block_rows);
}

// SSE2's broadcast panel for transposed rows (plan_heuristic.cpp, broadcast_panel), on Zen 3's
// caches (32 KiB L1d, 512 KiB L2), where it was measured: the panel holds the block's row tiles
// within a quarter of L2. Where that would cut the row block to less than half, shallower reduce
// blocks (halved, down to 32) make room first; a milder cut stays.
TEST(KernelPlan, TransposedRowsHalveTheReduceBlockBeforeCuttingTheRowBlockToLessThanHalf) {
  manual_seed(5);
  const codegen::Target t = codegen::make_target(Isa::Sse2, 32 << 10, 512 << 10, 32 << 20);
  auto tile = [&](const schedule::Kernel& k) {
    const KernelPlan p = codegen::plan(k, t);
    EXPECT_EQ(p.kind(), PlanKind::Tile) << p.str();
    return p.kind() == PlanKind::Tile ? std::get<codegen::TilePlan>(p.layout) : codegen::TilePlan{};
  };
  struct Want {
    schedule::Kernel k;
    int64_t block_k, block_rows;
  };
  const std::vector<Want> wants = {
      // A 3x3 convolution's product at batch 1: cols [C K, N L]^T W^T, K = 576. 256-deep blocks
      // of 252 rows (the accumulators' eighth of L2) would be cut to 30 rows; 128-deep ones to 60;
      // 64-deep ones to 126, half.
      {kernel_named({matmul(input({576, 3136}).t(), input({64, 576}).t())}, "r_3136_64_576"), 64,
       126},
      // x^T W^T with the whole K = 128 in blocks of 96 rows: cut to 60 rows, whole K.
      {kernel_named({matmul(input({128, 10001}).t(), input({128, 128}).t())}, "r_10001_128_128"), 0,
       60},
      // The step's weight gradient dz^T h: its 32-deep block of 132 rows fits as it is.
      {kernels().weight_grad_bias, 32, 132},
  };
  for (const Want& w : wants) {
    const codegen::TilePlan p = tile(w.k);
    EXPECT_EQ(p.row_panel, codegen::RowPanel::Broadcast) << w.k.name() << KernelPlan{p}.str();
    EXPECT_EQ(p.block_k, w.block_k) << w.k.name() << KernelPlan{p}.str();
    EXPECT_EQ(p.block_rows, w.block_rows) << w.k.name() << KernelPlan{p}.str();
  }
}

// ResNet's deeper 3x3 convolutions at batch 1, cols [C K, L]^T W^T: 49 x 512 x 4608 (7x7 maps),
// 196 x 256 x 2304 (14x14) and 784 x 128 x 1152 (28x28).
struct DeepConvProducts {
  schedule::Kernel deep, mid, tall;
};
DeepConvProducts deep_conv_products() {
  return {kernel_named({matmul(input({4608, 49}).t(), input({512, 4608}).t())}, "r_49_512_4608"),
          kernel_named({matmul(input({2304, 196}).t(), input({256, 2304}).t())}, "r_196_256_2304"),
          kernel_named({matmul(input({1152, 784}).t(), input({128, 1152}).t())}, "r_784_128_1152")};
}

// A blocked reduce over few rows beside many columns (plan_heuristic.cpp, column_units): a deep
// layer's convolution at batch 1, cols [C K, L]^T W^T, whose row blocks would each pack the whole
// weight. The rows are one block, the units column blocks (2 to 4 here), no split-K: 49 x 512 x
// 4608 on Zen 3's caches (where it was measured) and the fixed targets of every ISA level but SSE2
// (its broadcast panel sizes the row blocks, plan_heuristic.cpp's broadcast_panel); 196 x 256 x
// 2304 on Zen 3's (in 1 MiB of L2 it makes 2 row blocks, which re-read less than 4 column blocks
// would). More rows than columns keep their row blocks, and the weight gradient (its rows one
// block already) its split-K.
TEST(KernelPlan, FewRowsBesideALargeWeightSplitTheColumns) {
  manual_seed(6);
  const auto [deep, mid, tall] = deep_conv_products();
  const codegen::Target zen3 = codegen::make_target(Isa::Avx2, 32 << 10, 512 << 10, 32 << 20);
  std::vector<codegen::Target> targets = {zen3};
  for (Isa isa : test::all_isas()) targets.push_back(target_of(isa));
  for (const codegen::Target& t : targets) {
    SCOPED_TRACE(codegen::isa_name(t.isa) + std::string(" L2 ") + std::to_string(t.l2));
    std::vector<const schedule::Kernel*> few = {&deep};
    if (t.l2 == zen3.l2) few.push_back(&mid);
    for (const schedule::Kernel* k : few) {
      const KernelPlan p = codegen::plan(*k, t);
      ASSERT_EQ(p.kind(), PlanKind::Tile) << p.str();
      const auto& tp = std::get<codegen::TilePlan>(p.layout);
      if (tp.row_panel == codegen::RowPanel::Broadcast) continue;  // SSE2: its panel's row blocks
      EXPECT_GE(tp.block_rows, k->full_shape[0]) << k->name() << ": " << p.str();
      EXPECT_GT(tp.block_k, 0) << k->name() << ": " << p.str();
      EXPECT_EQ(tp.split_k, 0) << k->name() << ": " << p.str();
      const int64_t units = p.units(*k);
      EXPECT_GE(units, 2) << k->name() << ": " << p.str();
      EXPECT_LE(units, 4) << k->name() << ": " << p.str();
      EXPECT_EQ(p.illegal(*k, t), "") << k->name() << ": " << p.str();
    }
    const KernelPlan pt = codegen::plan(tall, t);
    ASSERT_EQ(pt.kind(), PlanKind::Tile) << pt.str();
    EXPECT_EQ(std::get<codegen::TilePlan>(pt.layout).block_cols, 0) << pt.str();
    EXPECT_LT(std::get<codegen::TilePlan>(pt.layout).block_rows, 784) << pt.str();
    const KernelPlan pw = codegen::plan(kernels().weight_grad, t);
    EXPECT_GT(std::get<codegen::TilePlan>(pw.layout).split_k, 0) << pw.str();
    EXPECT_EQ(std::get<codegen::TilePlan>(pw.layout).block_cols, 0) << pw.str();
  }
}

// Column tiles that rows outside would stream from L2 faster than the FMAs use them (AVX-512's 6x4
// and 5x4 tiles: 256 bytes a k step; plan_heuristic.cpp's tile_panel_block): packed, their reduce
// blocks shrink until one tile's panel fits half of L1 (64 deep in 32 or 48 KiB) and the column
// tiles go outside. The deep convolution's products keep one row block and take column blocks
// for units, not split-K slices (which its one row block would sum as partials). AVX2's 6x2 tile
// (64 bytes a step) keeps its rows outside.
TEST(KernelPlan, WideColumnTilesBlockTheReduceForL1AndGoOutside) {
  manual_seed(7);
  const auto [deep, mid, tall] = deep_conv_products();
  const codegen::Target xeon = codegen::make_target(Isa::Avx512, 48 << 10, 2 << 20, 32 << 20);
  const codegen::Target zen4 = codegen::make_target(Isa::Avx512, 32 << 10, 1 << 20, 32 << 20);
  const codegen::Target zen3 = codegen::make_target(Isa::Avx2, 32 << 10, 512 << 10, 32 << 20);
  for (const codegen::Target* t : {&xeon, &zen4}) {
    SCOPED_TRACE("L1 " + std::to_string(t->l1d));
    for (const schedule::Kernel* k : {&deep, &mid, &tall}) {
      const KernelPlan p = codegen::plan(*k, *t);
      ASSERT_EQ(p.kind(), PlanKind::Tile) << p.str();
      const auto& tp = std::get<codegen::TilePlan>(p.layout);
      EXPECT_EQ(tp.tile_cols, 64) << k->name() << ": " << p.str();
      EXPECT_TRUE(tp.pack_cols) << k->name() << ": " << p.str();
      EXPECT_EQ(tp.block_k, 64) << k->name() << ": " << p.str();
      EXPECT_TRUE(tp.cols_outer) << k->name() << ": " << p.str();
      EXPECT_EQ(p.illegal(*k, *t), "") << k->name() << ": " << p.str();
    }
    // Zen 4's 1 MiB L2 leaves 196 x 256 x 2304 in two row blocks (its accumulators and panels
    // past a quarter of L2: plan_heuristic.cpp's split_k_rows).
    std::vector<const schedule::Kernel*> one_block = {&deep};
    if (t == &xeon) one_block.push_back(&mid);
    for (const schedule::Kernel* k : one_block) {
      const KernelPlan p = codegen::plan(*k, *t);
      const auto& tp = std::get<codegen::TilePlan>(p.layout);
      EXPECT_GE(tp.block_rows, k->full_shape[0]) << k->name() << ": " << p.str();
      EXPECT_GT(tp.block_cols, 0) << k->name() << ": " << p.str();
      EXPECT_EQ(tp.split_k, 0) << k->name() << ": " << p.str();
    }
  }
  for (const schedule::Kernel* k : {&deep, &mid, &tall}) {
    const KernelPlan p = codegen::plan(*k, zen3);
    const auto& tp = std::get<codegen::TilePlan>(p.layout);
    EXPECT_EQ(tp.tile_cols, 16) << k->name() << ": " << p.str();
    EXPECT_FALSE(tp.cols_outer) << k->name() << ": " << p.str();
  }
}

// k's plan on t, a legal tile plan (a default TilePlan, after the failures, where it is not).
codegen::TilePlan tile(const schedule::Kernel& k, const codegen::Target& t) {
  const KernelPlan p = codegen::plan(k, t);
  EXPECT_EQ(p.kind(), PlanKind::Tile) << p.str();
  EXPECT_EQ(p.illegal(k, t), "") << k.name() << ": " << p.str();
  return p.kind() == PlanKind::Tile ? std::get<codegen::TilePlan>(p.layout) : codegen::TilePlan{};
}

// Read in place, AVX-512's 64-column tiles over a reduce that is one block go outside the rows
// where the column tiles' data outgrows half of L1 (plan_heuristic.cpp's cols_outer): ResNet-50's
// 1x1 reductions (W x: 64 rows, 3136 columns, K = 256) and the 7x7 stem's W cols (K = 147). A
// short reduce (MobileNetV2's K = 16) keeps its column blocks with the rows outside.
TEST(KernelPlan, WideColumnTilesInPlaceGoOutsideForADeepReduce) {
  manual_seed(9);
  const schedule::Kernel reduce =
      kernel_named({matmul(input({64, 256}), input({256, 3136}))}, "r_64_3136_256");
  const schedule::Kernel stem =
      kernel_named({matmul(input({64, 147}), input({147, 12544}))}, "r_64_12544_147");
  const schedule::Kernel shallow =
      kernel_named({matmul(input({96, 16}), input({16, 12544}))}, "r_96_12544_16");
  const codegen::Target xeon = codegen::make_target(Isa::Avx512, 48 << 10, 2 << 20, 32 << 20);
  for (const schedule::Kernel* k : {&reduce, &stem}) {
    const codegen::TilePlan p = tile(*k, xeon);
    EXPECT_FALSE(p.pack_cols) << k->name() << ": " << KernelPlan{p}.str();
    EXPECT_EQ(p.block_k, 0) << k->name() << ": " << KernelPlan{p}.str();
    EXPECT_TRUE(p.cols_outer) << k->name() << ": " << KernelPlan{p}.str();
  }
  EXPECT_FALSE(tile(shallow, xeon).cols_outer) << KernelPlan{tile(shallow, xeon)}.str();
}

// The study's forward x W^T (K = 128, one reduce block): AVX-512's packed 64-column tile panel,
// 32 KiB, goes outside the rows where it fits two thirds of L1 (48 KiB, plan_heuristic.cpp's
// cols_outer), not on a 32 KiB L1; AVX2's 16-column tiles keep the rows outside (its rule).
TEST(KernelPlan, WideColumnTilesPackedGoOutsideWhereTheirPanelFitsL1) {
  manual_seed(10);
  const schedule::Kernel forward =
      kernel_named({matmul(input({10000, 128}), input({128, 128}).t())}, "r_10000_128_128");
  const codegen::Target xeon = codegen::make_target(Isa::Avx512, 48 << 10, 2 << 20, 32 << 20);
  const codegen::Target zen4 = codegen::make_target(Isa::Avx512, 32 << 10, 1 << 20, 32 << 20);
  const codegen::Target zen3 = codegen::make_target(Isa::Avx2, 32 << 10, 512 << 10, 32 << 20);
  for (auto [t, outer] :
       {std::pair{&xeon, true}, std::pair{&zen4, false}, std::pair{&zen3, false}}) {
    SCOPED_TRACE("L1 " + std::to_string(t->l1d) + ", isa " + std::to_string(int(t->isa)));
    const KernelPlan p = codegen::plan(forward, *t);
    ASSERT_EQ(p.kind(), PlanKind::Tile) << p.str();
    const auto& tp = std::get<codegen::TilePlan>(p.layout);
    EXPECT_TRUE(tp.pack_cols) << p.str();
    EXPECT_EQ(tp.block_k, 0) << p.str();
    EXPECT_EQ(tp.cols_outer, outer) << p.str();
    EXPECT_EQ(p.illegal(forward, *t), "") << p.str();
  }
}

// A tie of the register tile's model goes to more accumulators past a small batch
// (plan_heuristic.cpp's register_tile): the weight gradient dz^T h over 128 rows scores 5x4 (130
// padded rows) and 6x4 (132) alike at AVX-512, and takes 6x4.
TEST(KernelPlan, TiedRegisterTilesTakeMoreAccumulators) {
  manual_seed(11);
  const schedule::Kernel grad =
      kernel_named({matmul(input({10000, 128}).t(), input({10000, 128}))}, "r_128_128_10000");
  const codegen::Target xeon = codegen::make_target(Isa::Avx512, 48 << 10, 2 << 20, 32 << 20);
  const KernelPlan p = codegen::plan(grad, xeon);
  ASSERT_EQ(p.kind(), PlanKind::Tile) << p.str();
  const auto& tp = std::get<codegen::TilePlan>(p.layout);
  EXPECT_EQ(tp.tile_rows, 6) << p.str();
  EXPECT_EQ(tp.tile_cols, 64) << p.str();
  EXPECT_EQ(p.illegal(grad, xeon), "") << p.str();
}

// A 3x3 convolution's channel-major cols^T W^T past 64 output channels (plan_heuristic.cpp's
// row_panel): AVX-512's column tiles outside the rows over 64-deep blocks read rows less than a
// page apart in place (28x28: 3136-byte steps), and pack rows a page or more apart (batch 8:
// 25 KiB steps); AVX2's rows outside pack them at either batch.
TEST(KernelPlan, FarRowsWithinAPageAreReadInPlaceUnderColumnsOutside) {
  manual_seed(12);
  const auto cols_wt = [](int64_t rows) {
    return kernel_named({matmul(input({1152, rows}).t(), input({128, 1152}).t())},
                        "r_" + std::to_string(rows) + "_128_1152");
  };
  const schedule::Kernel b1 = cols_wt(784), b8 = cols_wt(6272);
  const codegen::Target xeon = codegen::make_target(Isa::Avx512, 48 << 10, 2 << 20, 32 << 20);
  const codegen::Target zen3 = codegen::make_target(Isa::Avx2, 32 << 10, 512 << 10, 32 << 20);
  const codegen::TilePlan in_place = tile(b1, xeon);
  EXPECT_TRUE(in_place.cols_outer) << KernelPlan{in_place}.str();
  EXPECT_GT(in_place.block_k, 0) << KernelPlan{in_place}.str();
  EXPECT_EQ(in_place.row_panel, codegen::RowPanel::None) << KernelPlan{in_place}.str();
  EXPECT_EQ(tile(b8, xeon).row_panel, codegen::RowPanel::Scalar)
      << KernelPlan{tile(b8, xeon)}.str();
  for (const schedule::Kernel* k : {&b1, &b8})
    EXPECT_EQ(tile(*k, zen3).row_panel, codegen::RowPanel::Scalar) << k->name();
}

}  // namespace
