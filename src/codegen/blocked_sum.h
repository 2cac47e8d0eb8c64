// Blocked pairwise summation of a floating SUM in generated C (the loop renderer, render_c.cpp).
// Internal to codegen.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>

#include "codegen/render_tile.h"

namespace ember::codegen {

// Blocked pairwise summation of a floating SUM (the error bound is stated on Tensor::sum in
// tensor.h). Each accumulator slot sums a block of at most kSumBlock terms in its register (the
// inner loop stays a plain, vectorisable loop); each finished block partial enters a binary
// counter of partials (lv_[k] holds the sum of 2^k blocks), which combines them pairwise:
// block c merges with the partials of the levels given by c's trailing one bits. All slots
// flush together, so one block counter serves them all. Costs one flush per block. The block,
// kSumBlock, is in render_tile.h: the tiled products sum in the same blocks.

struct BlockedSum {
  bool on = false;
  size_t flush_depth = 0;  // indentation of the loop after whose body a block may end
  int64_t nacc = 1, every = 1;
  std::string T;

  std::string slot(const char* x, const std::string& i) const {
    return nacc == 1 ? std::string(x) + "0" : std::string(x) + "[" + i + "]";
  }
  std::string level(int64_t k, const std::string& i) const {
    return nacc == 1 ? "lv_[" + std::to_string(k) + "]"
                     : "lv_[" + std::to_string(k) + "][" + i + "]";
  }
  void begin(std::ostringstream& s, const std::string& ind, const std::string& type, int64_t n_acc,
             int64_t per_slot, int64_t n_last) {
    T = type;
    nacc = n_acc;
    // A last axis longer than a block is split into blocks; a shorter one ends a block every
    // `every` passes of it (at most kSumBlock terms).
    every = n_last > kSumBlock ? 1 : kSumBlock / n_last;
    int64_t passes = per_slot / n_last;  // of the last axis
    int64_t blocks =
        every > 1 ? (passes + every - 1) / every : passes * ((n_last + kSumBlock - 1) / kSumBlock);
    int64_t levels = 1;
    // Flushing block c writes level (trailing ones of c) <= log2(c + 1); the finish reads every set
    // bit of the final count: 2^levels > blocks covers both.
    while ((int64_t{1} << levels) <= blocks) levels++;
    s << ind << T << " lv_[" << levels << "]" << (nacc == 1 ? "" : "[" + std::to_string(nacc) + "]")
      << ";\n";
    s << ind << "uint64_t nblk_ = 0;\n";
    if (every > 1) s << ind << "int64_t cnt_ = 0;\n";
  }
  // Adds each slot's block partial to the counter and clears the slot.
  void flush(std::ostringstream& s, const std::string& ind) const {
    std::string in = ind + "  ";
    s << ind << "{\n";
    s << in << "int k_ = 0;\n";
    s << in << "for (uint64_t c_ = nblk_; c_ & 1; c_ >>= 1) k_++;\n";
    s << in << "for (int i = 0; i < " << nacc << "; i++) {\n";
    s << in << "  " << T << " p_ = " << slot("acc", "i") << ";\n";
    s << in << "  for (int l_ = 0; l_ < k_; l_++) p_ = " << (nacc == 1 ? "lv_[l_]" : "lv_[l_][i]")
      << " + p_;\n";
    s << in << "  " << (nacc == 1 ? "lv_[k_]" : "lv_[k_][i]") << " = p_;\n";
    s << in << "  " << slot("acc", "i") << " = 0;\n";
    s << in << "}\n";
    s << in << "nblk_++;\n";
    s << ind << "}\n";
  }
  void after_block(std::ostringstream& s, const std::string& ind) const {
    if (every == 1) return flush(s, ind);
    s << ind << "if (++cnt_ == " << every << ") {\n";
    s << ind << "  cnt_ = 0;\n";
    flush(s, ind + "  ");
    s << ind << "}\n";
  }
  // Each slot's total: its open block plus the stored partials, smallest first.
  void finish(std::ostringstream& s, const std::string& ind) const {
    s << ind << "for (int i = 0; i < " << nacc << "; i++) {\n";
    s << ind << "  " << T << " p_ = " << slot("acc", "i") << ";\n";
    s << ind << "  for (int l_ = 0; (nblk_ >> l_) != 0; l_++)\n";
    s << ind << "    if ((nblk_ >> l_) & 1) p_ = p_ + " << (nacc == 1 ? "lv_[l_]" : "lv_[l_][i]")
      << ";\n";
    s << ind << "  " << slot("acc", "i") << " = p_;\n";
    s << ind << "}\n";
  }
};

}  // namespace ember::codegen
