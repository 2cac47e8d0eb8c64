// The plans of kernels in the dialects with work-items (kernel_plan.h, GpuPlan): fixed shapes,
// sized down to the kernel where it is smaller, no search.
#include <algorithm>
#include <optional>

#include "codegen/kernel_plan.h"
#include "codegen/tile_operands.h"

namespace ember::codegen {

namespace {

// Work-items per group: 256 fills a GPU's scheduler with 8 warps of 32 and stays under every
// device's limit (CUDA 1024; PoCL's CPU devices 4096).
constexpr int64_t kLocal = 256;
// A product's work-group tile and register tile: 32 x 32 outputs, 2 x 2 per work-item (256
// work-items), panels of 16 along the reduce axis (2 x 4 KiB of float64 local memory).
constexpr int64_t kTile = 32, kReg = 2, kDepth = 16;

int64_t pow2_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The tiled product of `ops`, its panels as deep as `local_bytes` allows; nullopt where no depth
// fits.
std::optional<GpuPlan> tiled_product(const schedule::Kernel& k, const TileOperands& ops,
                                     int64_t outputs, int64_t local_bytes) {
  GpuPlan g;
  const int64_t N = k.full_shape[ops.row], M = k.full_shape[ops.col];
  g.kind = GpuKind::TiledProduct;
  // Each side of the tile a power of two no larger than the axis needs, its register tile 2
  // where the side allows.
  g.tile_m = std::min(kTile, pow2_at_least(N));
  g.tile_n = std::min(kTile, pow2_at_least(M));
  g.reg_m = std::min(kReg, g.tile_m);
  g.reg_n = std::min(kReg, g.tile_n);
  g.local = (g.tile_m / g.reg_m) * (g.tile_n / g.reg_n);
  g.groups = outputs / (N * M) * ceil_div(N, g.tile_m) * ceil_div(M, g.tile_n);
  // Per step along the reduce axis: a row of each row operand's panel, a column of each column
  // operand's, in the reduce's dtype (render_gpu_product.cpp).
  const int64_t per_step = (static_cast<int64_t>(ops.rows.size()) * g.tile_m +
                            static_cast<int64_t>(ops.cols.size()) * g.tile_n) *
                           static_cast<int64_t>(element_size(ops.reduce->dtype));
  for (g.tile_k = kDepth; g.tile_k >= 1; g.tile_k /= 2) {
    g.local_bytes = per_step * g.tile_k;
    if (g.local_bytes <= local_bytes) return g;
  }
  return std::nullopt;
}

}  // namespace

GpuPlan gpu_plan(const schedule::Kernel& k, int64_t local_bytes) {
  GpuPlan g;
  const size_t nglob = k.full_shape.size() - k.reduce_axes.size();
  int64_t outputs = 1, terms = 1;
  for (size_t d = 0; d < k.full_shape.size(); d++) (d < nglob ? outputs : terms) *= k.full_shape[d];
  if (outputs == 0) return g;  // no work-items
  const auto ops = k.reduce_axes.empty() ? std::nullopt : tile_operands(k);
  if (ops && k.more_outputs.empty() && schedule::kernel_nests(k).empty())
    if (auto tiled = tiled_product(k, *ops, outputs, local_bytes)) return *tiled;
  if (!k.reduce_axes.empty() && terms > 1) {
    g.kind = GpuKind::GroupReduce;
    g.local = std::min(kLocal, pow2_at_least(terms));
    g.groups = outputs;
  } else {
    g.local = std::min(kLocal, outputs);
    g.groups = ceil_div(outputs, g.local);
  }
  return g;
}

std::string GpuPlan::str() const {
  static const char* const kinds[] = {"items", "group_reduce", "tiled_product"};
  std::string s = std::string("gpu ") + kinds[static_cast<int>(kind)] + ": GROUPS(" +
                  std::to_string(groups) + ") LOCAL(" + std::to_string(local) + ")";
  if (kind == GpuKind::TiledProduct)
    s += " TILE(" + std::to_string(tile_m) + "," + std::to_string(tile_n) + "," +
         std::to_string(tile_k) + ") REG(" + std::to_string(reg_m) + "," + std::to_string(reg_n) +
         ")";
  return s;
}

}  // namespace ember::codegen
