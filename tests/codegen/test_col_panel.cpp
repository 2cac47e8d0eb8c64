// The tiled products' column panel (tile_col_panel.cpp: PACK on the column axis, tile-major
// [column tile][k][TM]) at its edges, under every ISA level: column counts the tile does not
// divide (zero padding), reduce depths the reduce block does not divide, split-K, column blocks
// (with reduce blocks too), batch axes, float and double, operands contiguous along the columns
// (copied) or along k (transposed in registers) or computed; the panel of the whole block (rows
// outside) and the panel of one column tile (COLS_OUTER with a contiguous operand: packed in the
// column loop); the panel of the unit's whole reduce range in blocks (or split-K slice), packed
// once for the row blocks that follow one another (col_panel_whole_range); the launch's one panel
// in scratch, shared by the threads (col_panel_shared).
// Each plan runs on the cpu device on random inputs and is compared with the interp device.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codegen/kernel_plan.h"
#include "codegen/render_tile.h"
#include "codegen/tile_operands.h"
#include "ember/support/thread_pool.h"
#include "kernel_list.h"
#include "plan_run.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/target.h"

namespace {

using namespace ember;
using codegen::KernelPlan;
using codegen::TilePlan;
using schedule::Kernel;

// The product kernel among the kernels of `t` (the one tile_operands accepts).
Kernel product_of(const Tensor& t) {
  for (Kernel& k : test::kernels_of({t}))
    if (codegen::tile_operands(k)) return k;
  ADD_FAILURE() << "no product among the kernels";
  return {};
}

// Packed-column plans of `k`: a 3-row tile of two vectors, then the variant's blocks and order.
struct Variant {
  const char* what;
  int64_t block_k, split_k, block_cols_tiles;
  bool cols_outer;
};

TilePlan packed(const Kernel& k, const codegen::Target& t, const Variant& v) {
  const auto p = codegen::tile_operands(k);
  TilePlan tp;
  tp.row = p->row, tp.col = p->col, tp.red = p->red;
  tp.lanes = t.lanes(p->reduce->dtype);
  tp.tile_rows = 3, tp.tile_cols = 2 * tp.lanes;
  tp.pack_cols = true;
  tp.block_rows = 2 * tp.tile_rows;
  tp.block_k = v.block_k, tp.split_k = v.split_k;
  tp.block_cols = v.block_cols_tiles * tp.tile_cols;
  tp.cols_outer = v.cols_outer;
  return tp;
}

TEST(ColPanel, PackedPlansMatchInterp) {
  manual_seed(42);
  const Tensor a = randn({37, 203}), b = randn({203, 77}), bt = randn({83, 203});
  const Tensor ad = randn({21, 150}, kFloat64), bd = randn({150, 37}, kFloat64);
  const Tensor xs = randn({3, 13, 70}), ys = randn({3, 70, 67});
  const std::vector<std::pair<const char*, Tensor>> products = {
      {"a @ b (contiguous columns, 77 of them)", matmul(a, b)},
      {"a @ bt^T (transposed columns)", matmul(a, bt.t())},
      {"a @ (2 b + 1) (computed columns)", matmul(a, b * 2 + 1)},
      {"double a @ b", matmul(ad, bd)},
      {"double a @ b^T", matmul(ad, randn({41, 150}, kFloat64).t())},
      {"batched xs @ ys", matmul(xs, ys)},
  };
  const std::vector<Variant> variants = {
      {"one block, rows outside", 0, 0, 0, false},
      {"one block, per column tile", 0, 0, 0, true},
      {"blocks of 32, rows outside", 32, 0, 0, false},
      {"blocks of 32, per column tile", 32, 0, 0, true},
      {"column blocks of 1 tile, rows outside", 0, 0, 1, false},
      {"column blocks of 1 tile, per column tile", 0, 0, 1, true},
      {"column blocks of 2 tiles in blocks of 32, rows outside", 32, 0, 2, false},
      {"column blocks of 1 tile in blocks of 32, per column tile", 32, 0, 1, true},
      {"split-K slices of 64 in blocks of 16, rows outside", 16, 64, 0, false},
      {"split-K slices of 64 in blocks of 16, per column tile", 16, 64, 0, true},
  };
  const codegen::Target& target = runtime::host_target();
  struct Case {
    Kernel k;
    std::vector<KernelPlan> plans;
    std::vector<std::shared_ptr<runtime::Program>> programs;
    std::vector<bool> per_tile;  // col_panel_per_tile
    std::vector<bool> whole;     // col_panel_whole_range
    std::vector<bool> shared;    // col_panel_shared
  };
  std::vector<Case> cases;
  std::vector<std::shared_ptr<runtime::Program>> all;
  int per_tile = 0, whole = 0, shared = 0;
  for (const auto& [name, t] : products) {
    Case c{product_of(t), {}, {}, {}, {}, {}};
    const auto p = codegen::tile_operands(c.k);
    ASSERT_TRUE(p) << name;
    for (const Variant& v : variants) {
      const KernelPlan plan{packed(c.k, target, v)};
      ASSERT_EQ(plan.illegal(c.k, target), "") << name << ": " << v.what;
      c.plans.push_back(plan);
      c.programs.push_back(runtime::prepare_cpu_program(c.k, plan));
      all.push_back(c.programs.back());
      c.per_tile.push_back(codegen::col_panel_per_tile(*p, true, v.cols_outer));
      per_tile += c.per_tile.back();
      c.whole.push_back(codegen::col_panel_whole_range(c.k, std::get<TilePlan>(plan.layout), *p));
      whole += c.whole.back();
      c.shared.push_back(codegen::col_panel_shared(c.k, std::get<TilePlan>(plan.layout), *p) > 0);
      shared += c.shared.back();
    }
    cases.push_back(std::move(c));
  }
  EXPECT_EQ(per_tile, 15);  // the contiguous products' COLS_OUTER plans
  // Blocks of 32 and split-K: with the rows outside, every product; per column tile, the three
  // whose columns are not contiguous (their panel is the block's). Not with column blocks.
  EXPECT_EQ(whole, 18);
  // The five unbatched products' plans without split-K or column blocks whose panel serves every
  // row block: one block or the whole range, with the rows outside (5 + 5) or per column tile
  // where the columns are not contiguous (3 + 3).
  EXPECT_EQ(shared, 16);
  runtime::cpu_device().build(all);
  std::mt19937_64 g(7);
  for (const Case& c : cases) {
    std::vector<std::vector<uint64_t>> inputs;
    for (const auto& b : c.k.buffers) inputs.push_back(test::random_buffer(b, g));
    const auto ref = test::run(*runtime::get_device("interp").compile({&c.k})[0], inputs);
    for (size_t i = 0; i < c.plans.size(); i++) {
      // The per-tile panel is indexed from the tile's first column; the block's from column 0.
      EXPECT_EQ(c.programs[i]->source.find("pk0[(m - m0)") != std::string::npos, c.per_tile[i])
          << c.plans[i].str();
      EXPECT_EQ(c.programs[i]->source.find("pkb0") != std::string::npos, c.whole[i])
          << c.plans[i].str();
      EXPECT_EQ(c.programs[i]->source.find("pk_st") != std::string::npos, c.shared[i])
          << c.plans[i].str();
      EXPECT_EQ(test::compare(c.k, test::run(*c.programs[i], inputs), ref, c.plans[i].str()), 0);
    }
  }
}

// The launch's panel (col_panel_shared) at 2 threads, in units of one row tile so that the
// threads race for it: every launch gives the interp device's sums, whichever unit packed the
// panel and whichever packed its own copy. Its scratch holds the state word and the panel.
TEST(ColPanel, SharedPanelAtTwoThreadsMatchesInterp) {
  manual_seed(3);
  const Kernel k = product_of(matmul(randn({300, 130}), randn({70, 130}).t()));
  const codegen::Target& target = runtime::host_target();
  TilePlan tp = packed(k, target, {"blocks of 32, rows outside", 32, 0, 0, false});
  tp.block_rows = tp.tile_rows;
  const KernelPlan plan{tp};
  ASSERT_EQ(plan.illegal(k, target), "");
  const auto p = codegen::tile_operands(k);
  const int64_t mpad = (70 + tp.tile_cols - 1) / tp.tile_cols * tp.tile_cols;
  ASSERT_EQ(codegen::col_panel_shared(k, tp, *p), 5 * 32 * mpad);  // 130 deep in 5 blocks of 32
  EXPECT_EQ(plan.scratch(k).bytes, 64 + 5 * 32 * mpad * 4);
  EXPECT_EQ(plan.scratch(k).zeroed, 64);
  EXPECT_EQ(plan.units(k), 100);
  EXPECT_TRUE(plan.splits(k));
  const int threads = support::num_threads();
  support::set_num_threads(2);
  auto program = runtime::prepare_cpu_program(k, plan);
  runtime::cpu_device().build({program});
  // Two sets of inputs, alternating: a panel left from the launch before would give the other
  // set's sums.
  std::mt19937_64 g(11);
  std::vector<std::vector<uint64_t>> inputs[2], refs[2];
  for (int s = 0; s < 2; s++) {
    for (const auto& b : k.buffers) inputs[s].push_back(test::random_buffer(b, g));
    refs[s] = test::run(*runtime::get_device("interp").compile({&k})[0], inputs[s]);
  }
  for (int i = 0; i < 40; i++)
    ASSERT_EQ(test::compare(k, test::run(*program, inputs[i % 2]), refs[i % 2],
                            "launch " + std::to_string(i)),
              0);
  support::set_num_threads(threads);
}

}  // namespace
