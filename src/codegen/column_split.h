// Split-K of a column sum (C[j] = sum_r f(r, j): a bias's or a value head's weight gradient,
// r_128_10000). With units of work of a few columns each, each unit reads part of every row (at
// AVX2, 2 units of 64 of 128 columns), and each thread's strided stream fetches the lines it
// skips too. Instead one unit takes all the columns (up to kSplitColumns) and the rows are cut
// into slices of a power-of-two number of kSumBlock blocks; each slice is a unit of work, its
// total lands in the launch's scratch, and the unit that finishes the last slice combines the
// totals in slice order through the blocked pairwise sum's binary counter (render_c.cpp). An
// aligned power-of-two run of blocks is a subtree of that counter, so the sums are the ones one
// unit walking all the rows makes, in the same order: bit-identical, whatever the split or the
// threads.
#pragma once
#include <cstdint>
#include <vector>

#include "codegen/kernel_plan.h"
#include "codegen/target.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// At most this many columns in the one unit of a split column sum (its accumulators stay in L1).
inline constexpr int64_t kSplitColumns = 256;

/// Whether the renderer can split `k` with these upcasts and unroll: one output axis, one reduce
/// axis after it longer than a block, a floating SUM, no nests, no unroll.
bool column_split_renderable(const schedule::Kernel& k, const std::vector<int64_t>& up, int unroll);
/// The heuristic's slice (rows, a power-of-two multiple of kSumBlock) for a column sum, or 0
/// where it stays unsplit: more than kSplitColumns columns (units of their own), too little work
/// to fan out, or too few rows.
int64_t column_split_rows(const schedule::Kernel& k);
/// Slices of `rows_per_slice` rows along the reduce axis.
int64_t column_split_slices(const schedule::Kernel& k, int64_t rows_per_slice);
/// The counters (zeroed) and the slices' totals, [unit][slice][column].
Scratch column_split_scratch(const schedule::Kernel& k, int64_t cols_per_unit,
                             int64_t rows_per_slice);

}  // namespace ember::codegen
