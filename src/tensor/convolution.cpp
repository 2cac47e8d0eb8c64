// Convolutions as the tiled matrix product of the weight and the stacked kernel taps (views of
// the input), in the output's layout (channel-major when the weight's gradient sums over a batch);
// depthwise ones without gradients as a sum over the taps (depthwise_convolution.cpp); transposed
// convolutions as convolutions of the zero-stuffed input (include/ember/convolution.h).
#include "ember/convolution.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "codegen/loop_shapes.h"
#include "ember/support/shape_str.h"
#include "tensor/convolution_taps.h"
#include "tensor/tensor_impl.h"
#include "tensor/windows.h"

namespace ember {

namespace {

std::string str(const DimVector& s) { return support::shape_str(s); }

// a / b rounded down (b > 0).
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

namespace detail {

Split split_input(const Tensor& x, const Taps& g) {
  const size_t n = g.stride.size();
  IntList whole;  // (before, after) from the last dim: x's ends to whole rows
  bool partial = false;
  for (size_t i = n; i-- > 0;) {
    const int64_t S = x.size(2 + static_cast<int64_t>(i)), s = g.stride[i];
    whole.push_back(0);
    whole.push_back((s - S % s) % s);
    partial = partial || S % s;
  }
  Tensor xw = partial ? constant_pad_nd(x, whole).contiguous() : x;
  Shape split = {x.size(0), x.size(1)};
  IntList rows_pad(4 * n, 0), rows_lo(n);  // (before, after) from the last dim of xs
  for (size_t i = 0; i < n; i++) {
    const int64_t s = g.stride[i], R = xw.size(2 + static_cast<int64_t>(i)) / s;
    const int64_t span = g.dilation[i] * (g.kernel[i] - 1) + 1;
    split.push_back(R);
    split.push_back(s);
    rows_lo[i] = std::max<int64_t>(0, -floor_div(-g.lo[i], s));
    const int64_t hi = std::max<int64_t>(0, floor_div(span - 1 - g.lo[i], s) + g.out[i] - R);
    // xs's dims after row dim i: 2 (n - 1 - i) + 1; constant_pad_nd lists the last dim first.
    const size_t at = 2 * (2 * (n - 1 - i) + 1);
    rows_pad[at] = rows_lo[i];
    rows_pad[at + 1] = hi;
  }
  return {constant_pad_nd(xw.reshape(split), rows_pad), rows_lo};
}

// Tap j of the windows: [N, C, *O], element [n, c, o] = x[n, c, o * s + at - lo] (zero outside x)
// with at = j * dilation per dim, which is xs[n, c, o + floor((at - lo) / s) + rows_lo, (at - lo)
// mod s] (split_input).
Tensor tap(const Split& x, const IntList& j, const Taps& g) {
  Tensor t = x.xs;
  Shape out = {t.size(0), t.size(1)};
  for (size_t i = 0; i < j.size(); i++) {
    const int64_t d = 2 + 2 * static_cast<int64_t>(i), s = g.stride[i];
    const int64_t at = j[i] * g.dilation[i] - g.lo[i], q = floor_div(at, s);
    t = t.narrow(d, q + x.rows_lo[i], g.out[i]).narrow(d + 1, at - q * s, 1);
    out.push_back(g.out[i]);
  }
  return t.reshape(out);
}

// Every tap index of the kernel, row-major.
std::vector<IntList> tap_indices(const IntList& kernel) {
  std::vector<IntList> all(1);
  for (int64_t k : kernel) {
    std::vector<IntList> next;
    for (const IntList& head : all)
      for (int64_t v = 0; v < k; v++) {
        next.push_back(head);
        next.back().push_back(v);
      }
    all = std::move(next);
  }
  return all;
}

}  // namespace detail

namespace {

using detail::product;
using detail::Split;
using detail::stored;
using detail::tap;
using detail::tap_indices;
using detail::Taps;

// The geometry of x [N, C, *S] under kernel w [OC, Cg, *k] padded by (lo, hi); ShapeError when a
// window does not fit.
Taps geometry(const Tensor& x, const Tensor& w, const IntList& stride, const IntList& dilation,
              const IntList& lo, const IntList& hi) {
  Taps g{IntList(w.sizes().begin() + 2, w.sizes().end()), stride, dilation, lo, hi, {}};
  const int64_t first = x.dim() - static_cast<int64_t>(stride.size());
  for (size_t i = 0; i < stride.size(); i++) {
    const int64_t S = x.size(first + static_cast<int64_t>(i)) + lo[i] + hi[i];
    const int64_t span = dilation[i] * (g.kernel[i] - 1) + 1;
    if (span > S)
      throw ShapeError("convolution: a window of " + std::to_string(span) + " elements (kernel " +
                       std::to_string(g.kernel[i]) + ", dilation " + std::to_string(dilation[i]) +
                       ") does not fit a padded dim of " + std::to_string(S));
    g.out.push_back((S - span) / stride[i] + 1);
  }
  return g;
}

// im2col cols [N, G, L, Cg K] from the padded input's windows (spatial_windows: a copy per
// spatial dim, then cols itself).
Tensor window_columns(const Tensor& x, const Taps& g, int64_t groups) {
  const int64_t n = static_cast<int64_t>(g.kernel.size()), N = x.size(0);
  const int64_t Cg = x.size(1) / groups;
  IntList p;  // (before, after) from the last dim
  for (size_t i = g.lo.size(); i-- > 0;) {
    p.push_back(g.lo[i]);
    p.push_back(g.hi[i]);
  }
  Tensor win = detail::spatial_windows(constant_pad_nd(x, p), g.kernel, g.stride, g.dilation);
  // [N, C, *O, *k] -> [N, G, Cg, *O, *k] -> [N, G, *O, Cg, *k] -> [N, G, L, Cg K].
  Shape split = {N, groups, Cg};
  split.insert(split.end(), win.sizes().begin() + 2, win.sizes().end());
  std::vector<int64_t> order = {0, 1};
  for (int64_t i = 0; i < n; i++) order.push_back(3 + i);
  order.push_back(2);
  for (int64_t i = 0; i < n; i++) order.push_back(3 + n + i);
  return win.reshape(split).permute(order).reshape(
      {N, groups, product(g.out), Cg * product(g.kernel)});
}

}  // namespace

namespace detail {

bool stored(const Tensor& x) {
  const ir::Node* n = detail::node_of(x).get();
  while (ir::is_movement(n->op) && !n->src.empty()) n = n->src[0].get();
  return n->op == ir::Op::BUFFER || n->op == ir::Op::CONTIGUOUS;
}

// split_input's rows xs [N, C, R_1, s_1, R_2, s_2, ...] copied phase by phase, [N, C, s_1, s_2,
// ..., R_1, R_2, ...], padding included, and viewed back in xs's order: each tap of a strided
// convolution then reads unit strides along its rows, where a view of x reads every s-th element
// behind the padding's masks, which GCC does not vectorise (a masked strided load). It pays where
// the taps outnumber the phases kMinPhaseTaps times (the copy itself reads x strided): ResNet's
// 7x7 stride-2 stem at batch 1, 3x49x112x112 taps from 3x224x224, 2.6 ms as views of x, 0.12 +
// 0.4 ms through the phases; a 3x3 stride-2 one about even (SqueezeNet's 3x9x111x111, 0.06 ms
// against 0.04 + 0.04) or worse (ResNet's 64x9x28x28, 0.15 ms against 0.15 + 0.05). DEBUG=2
// minima over 40 replays of bench_conv_paired, avx2, one thread. Few input channels take the
// phases at any kernel size (stacked_taps below).
constexpr int64_t kMinPhaseTaps = 4;
Tensor phase_major(const Tensor& xs) {
  const int64_t n = (xs.dim() - 2) / 2;
  std::vector<int64_t> order = {0, 1}, back(static_cast<size_t>(xs.dim()));
  for (int64_t i = 0; i < n; i++) order.push_back(3 + 2 * i);
  for (int64_t i = 0; i < n; i++) order.push_back(2 + 2 * i);
  for (size_t i = 0; i < order.size(); i++)
    back[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return xs.permute(order).contiguous().permute(back);
}

}  // namespace detail

namespace {

using detail::kMinPhaseTaps;
using detail::phase_major;

// The stacked taps of x, [N, C, K, *O] (a lazy view), x's rows phase-major where the taps
// outnumber the phases kMinPhaseTaps times, and always, when strided, for few input channels
// (`few`: few_channels_product's stems). There the phase copy is one pass over a small input (3
// channels), and the taps' copy reads unit strides where x's view read every s-th element, masked
// where the convolution pads (a load GCC leaves scalar). The stems' 3x3 stride-2 tap copies,
// DEBUG=2 minima of bench_conv_paired, avx2, one thread, loaded machine: MobileNetV3's 3x9x112x112
// (padding 1) 112-135 us as views of x, 30-45 + 30-38 us through the phases; SqueezeNet's
// 3x9x112x111 (no padding) 120-136 us against 36-57 + 60 us. At batch 8 (an input past L2) the
// phase copy, a masked stride-2 gather itself, takes half the gain: MobileNetV3's 1.39-1.52 ms
// against 0.67-0.75 + 0.52-0.65 ms.
Tensor stacked_taps(const Tensor& x, const Taps& g, bool few) {
  Split xs = split_input(stored(x) ? x : x.contiguous(), g);
  const int64_t phases = product(g.stride);
  if (phases > 1 && (few || product(g.kernel) >= kMinPhaseTaps * phases))
    xs.xs = phase_major(xs.xs);
  std::vector<Tensor> taps;
  for (const IntList& j : tap_indices(g.kernel)) taps.push_back(tap(xs, j, g));
  return stack(taps, 2);
}

// Output channels up to which windows_product takes the pixel-major columns
// (pixel_major_product).
constexpr int64_t kMaxPixelMajorChannels = 64;

// An ungrouped kernel of more than one tap into few output channels, with pixel-major columns:
// x zero-padded and channels-last [N, *S', C] (one copy, reading x once), its taps stacked into
// cols [N, L, K C] (copies of whole C-float runs, no masks), times W^T [K C, OC] (the weight's
// taps outside its channels, one small copy) -> [N, L, OC], viewed as [N, 1, OC, *O]. The product
// reads each row of cols in place, along k, where windows_product's channel-major cols [C K, N L]
// need a transposing pack of every row block, paid back by little work with few output channels
// (one or two column tiles). It is batched over the images, so that it stores NCHW itself at any
// batch (the small weight packed once per image). S' runs on past the last window to whole
// strides, so that split_input has no ends to copy. Against windows_product, 3x3 convolutions
// (bench_conv_paired with DEBUG=2, medians of 5 rounds, Xeon with AMX), 64 -> 64 channels at
// 56x56: avx512 2.76 -> 2.26 ms (the copies 0.50 -> 0.09 + 0.34 + 0.02 ms, the product 2.22 ->
// 1.65 ms), at batch 8 28.8 -> 24.9 ms (the consumer's transposing 2.6 ms gone; one product over
// the N L rows left that permute to it); avx2 4.07 -> 3.48 ms, batch 8 40.1 -> 37.1 ms (36.5 with
// one product and the consumer's permute). SqueezeNet's 16 -> 64 at 55x55: avx512 0.74 -> 0.62 ms,
// avx2 0.79 -> 0.77 ms. From 128 output channels on, even or worse (128 -> 128 at 28x28:
// avx512 2.15 -> 2.30 ms, avx2 3.05 -> 2.99 ms; 64 -> 128 at stride 2: 1.18 -> 1.33 ms, avx2 1.69
// -> 1.75 ms), and a large weight's copy would come on every call (512 -> 512 at 7x7: 1.5 ms).
Tensor pixel_major_product(const Tensor& x, const Tensor& w, const Taps& g) {
  const int64_t N = x.size(0), C = x.size(1), OC = w.size(0), n = x.dim() - 2;
  const int64_t K = product(g.kernel), L = product(g.out);
  IntList pad;  // (before, after) from the last dim; after: to whole strides past the windows
  for (int64_t i = n; i-- > 0;) {
    const size_t d = static_cast<size_t>(i);
    const int64_t padded = x.size(2 + i) + g.lo[d] + g.hi[d], s = g.stride[d];
    pad.push_back(g.lo[d]);
    pad.push_back(g.hi[d] + (s - padded % s) % s);
  }
  std::vector<int64_t> last = {0}, first = {0, n + 1};  // [N, C, *S'] <-> [N, *S', C]
  for (int64_t i = 0; i < n; i++) {
    last.push_back(2 + i);
    first.push_back(1 + i);
  }
  last.push_back(1);
  const Tensor xp = constant_pad_nd(x, pad).permute(last).contiguous().permute(first);
  Taps inside = g;  // the taps of the padded input
  std::fill(inside.lo.begin(), inside.lo.end(), 0);
  std::fill(inside.hi.begin(), inside.hi.end(), 0);
  std::vector<int64_t> order = {0};  // [N, C, K, *O] -> [N, *O, K, C]
  for (int64_t i = 0; i < n; i++) order.push_back(3 + i);
  order.push_back(2);
  order.push_back(1);
  Tensor cols = stacked_taps(xp, inside, false).permute(order).contiguous().reshape({N * L, K * C});
  Tensor wt = w.reshape({OC, C, K}).permute({0, 2, 1}).reshape({OC, K * C}).t();
  Shape out = {N, 1, OC};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return cols.reshape({N, L, K * C}).matmul(wt).permute({0, 2, 1}).reshape(out);
}

// A kernel of more than one tap: im2col cols [G, N L, Cg K] times W^T [G, Cg K, OCg] ->
// [G, N L, OCg], viewed as [N, G, OCg, *O]. cols is the taps stacked in one elementwise copy
// [C, K, N, *O] (the tap axis unrolled, each copy reading its own tap along x's rows: ResNet-18's
// 64-channel 3x3 conv at batch 1, 0.6 ms where spatial_windows' three copies took 5-8 ms), read
// transposed by the tiled product, which packs it. The batch sits inside the rows, so that one
// product packs the weight once for all N L rows (as [N, C K, L] each image's product packed it
// again: ResNet-18's products at batch 8 took 1.4-1.6x as long). The output stays in this
// orientation (the other, [OCg, N L], ran the product about twice as slow). A computed x is
// realized first, so that its producer (a previous product's epilogue) runs once, not once per
// tap. A kernel of more taps than the renderer unrolls (codegen::kMaxConcatAxis) would evaluate
// every tap's masked load per element: those take spatial_windows' copies.
Tensor windows_product(const Tensor& x, const Tensor& w, const Taps& g, int64_t groups) {
  const int64_t N = x.size(0), C = x.size(1), Cg = C / groups, OCg = w.size(0) / groups;
  const int64_t K = product(g.kernel), L = product(g.out);
  Tensor wt = w.reshape({groups, OCg, Cg * K}).transpose(-1, -2);
  Shape out = {N, groups, OCg};
  out.insert(out.end(), g.out.begin(), g.out.end());
  if (K > codegen::kMaxConcatAxis) {
    Tensor y = window_columns(x, g, groups).matmul(wt);  // [N, G, L, OCg]
    return y.transpose(2, 3).reshape(out);
  }
  if (groups == 1 && OCg <= kMaxPixelMajorChannels) return pixel_major_product(x, w, g);
  std::vector<int64_t> order = {1, 2, 0};  // [N, C, K, *O] -> [C, K, N, *O]
  for (size_t i = 0; i < g.out.size(); i++) order.push_back(3 + static_cast<int64_t>(i));
  Tensor cols =
      stacked_taps(x, g, false).permute(order).contiguous().reshape({groups, Cg * K, N * L});
  Tensor y = cols.transpose(1, 2).matmul(wt);  // [G, N L, OCg]
  return y.reshape({groups, N, L, OCg}).permute({1, 0, 3, 2}).reshape(out);
}

// Output rows added to the first output dim of few_channels_product's columns so that the
// product's column count (O_1 + r) O_2 ... (an image's) is a whole number of 16-float lines (two
// AVX2 vectors, the register tile's width): the product then reads the columns in place, where a
// partial last tile has it pack them in reduce blocks of 16 (SqueezeNet's 111x111 stem: 2.8-2.9x
// oneDNN's time, against 1.6-1.8x with one spare row). -1 where that takes more than an eighth more
// rows.
int64_t spare_rows(const Shape& out) {
  const int64_t inner = product(IntList(out.begin() + 1, out.end()));
  for (int64_t r = 0; r <= 15 && 8 * r <= out[0]; r++)
    if ((out[0] + r) * inner % 16 == 0) return r;
  return -1;
}

// Few input channels (a network's stem: 3 channels, K = 27 or 147, 12544 output pixels), without
// gradients: the product in the other orientation, W [G, OCg, Cg K] @ cols [N, G, Cg K, L] + bias,
// each image's L output pixels the columns, read in place as vectors and stored as vectors into
// the NCHW output [N, G, OCg, L] (at batch > 1 no transposing copy after the product). cols^T W^T
// (windows_product) broadcast its 12544 rows from a transposed operand through a packed row panel,
// stored each tile transposed (a scalar per pixel and channel) and gave 16 output channels
// (MobileNetV3) a single column tile. Time against oneDNN's direct convolution, before -> after
// (medians of two runs of 3-5 alternated old/new pairs, bench_conv_paired with CPU time, avx2, one
// thread, machine loaded): ResNet's 7x7 stem 1.77-2.00 -> 1.61-1.68x, at batch 8 2.55 -> 1.76x;
// MobileNetV3's 16x3x3x3 2.60-3.23 -> 2.32-2.73x; MobileNetV2's 32x3x3x3 2.98-3.15 -> 2.24-2.64x;
// SqueezeNet's 64x3x3x3 (one spare row) 1.87-2.89 -> 1.68-2.38x. cols carries r = spare_rows()
// extra output rows, zero; the bias is added before they are cut off, so that it stays the
// product's epilogue.
Tensor few_channels_product(const Tensor& x, const Tensor& w, const Tensor& bias, const Taps& g,
                            int64_t groups, int64_t r) {
  const int64_t N = x.size(0), Cg = x.size(1) / groups, OCg = w.size(0) / groups;
  const int64_t n = static_cast<int64_t>(g.out.size()), CgK = Cg * product(g.kernel);
  IntList pad(2 * static_cast<size_t>(n), 0);  // (before, after) from the last dim
  pad[2 * static_cast<size_t>(n) - 1] = r;
  Tensor cols =
      constant_pad_nd(stacked_taps(x, g, true), pad).contiguous();  // [N, C, K, O_1 + r, ...]
  Shape split = {N, groups, OCg, g.out[0] + r};
  split.insert(split.end(), g.out.begin() + 1, g.out.end());
  const int64_t pixels = product(IntList(split.begin() + 3, split.end()));
  Tensor y = w.reshape({groups, OCg, CgK}).matmul(cols.reshape({N, groups, CgK, pixels}));
  if (bias.defined()) y = y + bias.reshape({groups, OCg, 1});
  return y.reshape(split).narrow(3, 0, g.out[0]);
}

// Input channels up to which few_channels_product takes an ungrouped convolution (RGB, RGBA,
// gray; grouped ones unmeasured), where spare rows make its columns whole lines.
constexpr int64_t kMaxFewChannels = 4;

// The product with gradients at batch > 1 in the channel-major layout: cols [G, Cg K, N L] (one
// copy of the stacked taps, or of x's channels ahead of its batch for a 1x1 kernel) and
// y[G, OCg, N L] = W[G, OCg, Cg K] @ cols + bias, viewed as [N, G, OCg, *O]. The weight's
// gradient dY'[G, OCg, N L] @ cols^T (and the bias's, its row sums beside it) is then a product
// over the one reduce axis N L, as the taps' gradient W^T @ dY' is over OCg: each a tiled product
// (tile_operands), where the output's layout [N, G, OCg, L] would leave the weight's gradient a
// sum over N and L, two axes apart (a loop kernel). The price: dY in this layout, one copy.
Tensor channel_major_product(const Tensor& cols, const Tensor& w, const Tensor& bias, const Taps& g,
                             int64_t N, int64_t groups) {
  const int64_t OCg = w.size(0) / groups, CgK = cols.size(0) / groups, NL = cols.size(1);
  Tensor terms = w.reshape({groups, OCg, CgK, 1}) * cols.reshape({groups, 1, CgK, NL});
  Tensor y = terms.sum({2}, false, terms.dtype());  // [G, OCg, N L]
  if (bias.defined()) y = y + bias.reshape({groups, OCg, 1});
  Shape split = {groups, OCg, N};
  split.insert(split.end(), g.out.begin(), g.out.end());
  std::vector<int64_t> order = {2, 0, 1};  // [G, OCg, N, *O] -> [N, G, OCg, *O]
  for (size_t i = 0; i < g.out.size(); i++) order.push_back(3 + static_cast<int64_t>(i));
  return y.reshape(split).permute(order);
}

// x [N, C, *S] (unpadded), w [OC, C / groups, *k] -> [N, G, OCg, *O] plus bias ([OC] or
// undefined), computed in the output's layout: y[N, G, OCg, L] = W[G, OCg, Cg K] @ cols[N, G,
// Cg K, L], so the result is NCHW as it stands and the bias is the product's epilogue. cols is x
// itself for a 1x1 kernel with stride 1 and no padding, the taps stacked into one copy otherwise
// (a 1x1 kernel's strided or padded view too: its output positions would be two loop axes of the
// product). A depthwise convolution (Cg = 1) is the sum over the taps of tap * w[tap]
// (depthwise()): elementwise kernels, no cols at all. Without gradients a larger kernel takes
// windows_product (faster forward); with them the stacked taps, whose backward is 4 kernels where
// the windows' is 12, in the channel-major layout when the weight's gradient sums over a batch.
Tensor correlate(const Tensor& x, const Tensor& w, const Tensor& bias, const Taps& g,
                 int64_t groups) {
  const int64_t N = x.size(0), Cg = x.size(1) / groups, OCg = w.size(0) / groups;
  const int64_t K = product(g.kernel);
  bool in_place = K == 1;  // a 1x1 kernel, stride 1, no padding: cols is x
  for (size_t i = 0; i < g.stride.size(); i++)
    in_place = in_place && g.stride[i] == 1 && g.lo[i] == 0 && g.hi[i] == 0;
  const Split xs = split_input(x, g);
  const std::vector<IntList> js = tap_indices(g.kernel);
  Shape grouped = {N, groups, 1};
  grouped.insert(grouped.end(), g.out.begin(), g.out.end());  // [N, G, 1, *O]
  const bool grads = detail::grad_mode_enabled() && (x.requires_grad() || w.requires_grad());
  Shape b = {groups, OCg};
  b.insert(b.end(), g.out.size(), 1);  // bias as [G, OCg, 1...]
  auto with_bias = [&](const Tensor& y) { return bias.defined() ? y + bias.reshape(b) : y; };
  if (Cg == 1 && K <= detail::kMaxDirectTaps && !grads)
    return detail::depthwise(x, w, bias, g, groups);
  const int64_t spare = spare_rows(g.out);
  if (K > 1 && K <= codegen::kMaxConcatAxis && !grads && groups == 1 && Cg <= kMaxFewChannels &&
      spare >= 0)
    return few_channels_product(x, w, bias, g, groups, spare);
  if (K > 1 && !grads) return with_bias(windows_product(x, w, g, groups));
  const int64_t L = product(g.out);
  Tensor cols;  // [N, C, K, *O]
  if (in_place) {
    cols = tap(xs, js[0], g).unsqueeze(2);
  } else {  // one copy: the product then reads each column of cols at unit stride
    std::vector<Tensor> taps;
    for (const IntList& j : js) taps.push_back(tap(xs, j, g));
    cols = stack(taps, 2);
  }
  if (N > 1 && w.requires_grad()) {
    std::vector<int64_t> order = {1, 2, 0};  // [N, C, K, *O] -> [C, K, N, *O]
    for (int64_t i = 0; i < cols.dim() - 3; i++) order.push_back(3 + i);
    Tensor cm = cols.permute(order).contiguous().reshape({groups * Cg * K, N * L});
    return channel_major_product(cm, w, bias, g, N, groups);
  }
  if (!in_place) cols = cols.contiguous();
  // The product as multiply and sum over [N, G, OCg, Cg K, *O] (linalg.cpp's form; the scheduler
  // puts the reduce axis last): the sum is [N, G, OCg, *O], which its consumers reshape only where
  // G > 1, and the gradient of cols, a sum over OCg, comes out in cols' own layout.
  Shape ws = {1, groups, OCg, Cg * K};
  ws.insert(ws.end(), g.out.size(), 1);
  Shape cs = {N, groups, 1, Cg * K};
  cs.insert(cs.end(), g.out.begin(), g.out.end());
  Tensor terms = w.reshape(ws) * cols.reshape(cs);
  return with_bias(terms.sum({3}, false, terms.dtype()));
}

// Inserts s - 1 zeros between the elements of each of the last n dims.
Tensor stuff_zeros(const Tensor& x, const IntList& stride) {
  const int64_t n = static_cast<int64_t>(stride.size()), first = x.dim() - n;
  Tensor y = x;
  for (int64_t i = 0; i < n; i++) {
    const int64_t s = stride[i], d = first + i, S = y.size(d);
    if (s == 1 || S == 0) continue;
    Tensor u = y.unsqueeze(d + 1);  // [.., S, 1, ..]
    IntList p(2 * static_cast<size_t>(u.dim() - d - 1), 0);
    // constant_pad_nd lists (before, after) from the last dim: dim d + 1 is (dims after it) back.
    p[2 * static_cast<size_t>(u.dim() - d - 2) + 1] = s - 1;
    Shape merged = y.shape();
    merged[d] = S * s;
    y = constant_pad_nd(u, p).reshape(merged).narrow(d, 0, (S - 1) * s + 1);
  }
  return y;
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                   IntList padding, IntList dilation, bool transposed, IntList output_padding,
                   int64_t groups) {
  const int64_t n = weight.dim() - 2;
  if (n < 1)
    throw ShapeError("convolution: weight must have at least 3 dims, got " + str(weight.sizes()));
  const bool batched = input.dim() == n + 2;
  if (!batched && input.dim() != n + 1)
    throw ShapeError("convolution: expected a " + std::to_string(n + 1) + "-d or " +
                     std::to_string(n + 2) + "-d input for weight " + str(weight.sizes()) +
                     ", got " + str(input.sizes()));
  const size_t ns = static_cast<size_t>(n);
  stride = detail::per_dim(stride, ns, "convolution: stride", 1);
  padding = detail::per_dim(padding, ns, "convolution: padding", 0);
  dilation = detail::per_dim(dilation, ns, "convolution: dilation", 1);
  output_padding = detail::per_dim(output_padding, ns, "convolution: output_padding", 0);
  if (groups < 1)
    throw ValueError("convolution: groups must be positive, got " + std::to_string(groups));
  Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t C = x.size(1);
  const int64_t w_in = transposed ? weight.size(0) : weight.size(1) * groups;
  if (C % groups || weight.size(0) % groups || C != w_in)
    throw ShapeError("convolution: input " + str(input.sizes()) + " with " + std::to_string(C) +
                     " channels does not match weight " + str(weight.sizes()) + " and groups " +
                     std::to_string(groups));
  Tensor w = weight;
  IntList pad_lo = padding, pad_hi = padding;
  if (transposed) {
    for (size_t i = 0; i < ns; i++)
      if (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i])
        throw ValueError("convolution: output_padding must be smaller than stride or dilation");
    // [C_in, OCg, *k] -> [G, Cg, OCg, *k] -> [G, OCg, Cg, *k], flipped -> [OC, Cg, *k].
    const int64_t Cg = C / groups, OCg = weight.size(1);
    Shape g = {groups, Cg, OCg};
    g.insert(g.end(), weight.sizes().begin() + 2, weight.sizes().end());
    std::vector<int64_t> spatial(ns);
    std::iota(spatial.begin(), spatial.end(), 3);
    Shape flat = {groups * OCg, Cg};
    flat.insert(flat.end(), weight.sizes().begin() + 2, weight.sizes().end());
    w = weight.reshape(g).transpose(1, 2).flip(spatial).reshape(flat);
    x = stuff_zeros(x, stride);
    for (size_t i = 0; i < ns; i++) {
      const int64_t edge = dilation[i] * (weight.size(2 + i) - 1);
      pad_lo[i] = edge - padding[i];
      pad_hi[i] = edge - padding[i] + output_padding[i];
    }
    stride = IntList(ns, 1);
  } else if (weight.size(0) % groups) {
    throw ShapeError("convolution: weight " + str(weight.sizes()) +
                     " has an output channel count not divisible by groups " +
                     std::to_string(groups));
  }
  const Taps g = geometry(x, w, stride, dilation, pad_lo, pad_hi);
  const int64_t OC = w.size(0);
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != OC))
    throw ShapeError("convolution: bias " + str(bias.sizes()) + " does not match " +
                     std::to_string(OC) + " output channels");
  Tensor y = correlate(x, w, bias, g, groups);  // [N, G, OCg, *O]
  Shape out = {x.size(0), OC};
  out.insert(out.end(), g.out.begin(), g.out.end());
  y = y.reshape(out);
  return batched ? y : y.squeeze(0);
}

#define EMBER_CONV(n)                                                                              \
  Tensor conv##n##d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride, \
                    IntList padding, IntList dilation, int64_t groups) {                           \
    if (weight.dim() != n + 2)                                                                     \
      throw ShapeError("conv" #n "d: weight must have " + std::to_string(n + 2) + " dims, got " +  \
                       str(weight.sizes()));                                                       \
    return convolution(input, weight, bias, stride, padding, dilation, false, {0}, groups);        \
  }                                                                                                \
  Tensor conv_transpose##n##d(const Tensor& input, const Tensor& weight, const Tensor& bias,       \
                              IntList stride, IntList padding, IntList output_padding,             \
                              int64_t groups, IntList dilation) {                                  \
    if (weight.dim() != n + 2)                                                                     \
      throw ShapeError("conv_transpose" #n "d: weight must have " + std::to_string(n + 2) +        \
                       " dims, got " + str(weight.sizes()));                                       \
    return convolution(input, weight, bias, stride, padding, dilation, true, output_padding,       \
                       groups);                                                                    \
  }
EMBER_CONV(1)
EMBER_CONV(2)
EMBER_CONV(3)
#undef EMBER_CONV

}  // namespace ember
