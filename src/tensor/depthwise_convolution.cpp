// Depthwise convolutions without gradients (one input channel per group) as a sum over the kernel
// taps, each a shifted view of the input's rows times its weight: elementwise kernels, no
// columns (tensor/convolution_taps.h).
#include <optional>
#include <vector>

#include "ir/view.h"
#include "tensor/convolution_taps.h"
#include "tensor/tensor_impl.h"

namespace ember::detail {

namespace {

// The dims of a depthwise convolution's [N, C, ...] tensors with the channels moved last (to_last),
// and the order that moves them back (from_last).
std::vector<int64_t> to_last(int64_t rank) {
  std::vector<int64_t> o = {0};
  for (int64_t i = 2; i < rank; i++) o.push_back(i);
  o.push_back(1);
  return o;
}
std::vector<int64_t> from_last(int64_t rank) {
  std::vector<int64_t> o = {0, rank - 1};
  for (int64_t i = 1; i < rank - 1; i++) o.push_back(i);
  return o;
}

// The view through which node n reads the data behind it: the movement ops between n and its
// operand of as many elements that no op broadcasts (a buffer, a product's sum) composed, the
// elementwise ops between passed through; nullopt where there is none.
std::optional<ir::View> source_view(const ir::Node* n, int depth = 0) {
  if (depth > 64) return std::nullopt;
  if (ir::is_movement(n->op) && !n->src.empty()) {
    auto below = source_view(n->src[0].get(), depth + 1);
    return below ? below->apply(*n) : std::nullopt;
  }
  if (!ir::is_elementwise(n->op)) return ir::View::contiguous(n->shape);
  for (const auto& s : n->src) {
    auto v = s->numel() == n->numel() ? source_view(s.get(), depth + 1) : std::nullopt;
    bool whole = v.has_value();
    for (size_t d = 0; whole && d < v->shape.size(); d++)
      whole = v->shape[d] == 1 || v->strides[d] != 0;
    if (whole) return v;
  }
  return std::nullopt;
}

// Whether x [N, C, *S] reads its data with the channels innermost: a product's [N L, C] output
// (windows_product's: MobileNets' stem) seen as NCHW.
bool channels_last_source(const Tensor& x) {
  auto v = source_view(detail::node_of(x).get());
  return v && x.size(1) > 1 && v->strides[1] == 1;
}

// The largest map (in positions) whose depthwise convolution, input computed, sums its taps
// channels-last: its copy from a channel-major input transposes the map, and its consumers (a
// product's operand) copy its output back to channel-major.
constexpr int64_t kMaxChannelsLastMap = 56 * 56;
// Below it, a kernel of up to this many taps from a channel-major input stays channel-major at any
// stride: the transposing copies cost more than the sum saves (MobileNetV2's 3x3s at batch 8:
// 144x56x56 4.7 ms against 11.8 ms; at stride 2, 144x56x56 3.2 against 5.9 ms, 192x28x28 0.81
// against 1.45, 576x14x14 0.90 against 1.40; MobileNetV3-small's 72x56x56, 1.5 against 1.8 ms).
// A 5x5 gains (MobileNetV3's 576x7x7 at batch 1, 0.41 against 0.26 ms; its 96x28x28 at stride 2,
// batch 8, 1.17 against 0.75 ms). DEBUG=2 kernel minima over 6-20 replays, avx2, one thread.
constexpr int64_t kMaxChannelMajorTaps = 9;

// The shortest rows (of the last dim, in strides) at which a computed input's channel-major copy
// at a stride is phase-major (phase_major): the copy reads its input at the stride, but the tap sum
// then reads unit strides, not every s-th element (scalar loads). MobileNetV2's stride-2 3x3s, copy
// and sum (rows of 57, 29, 15, 8): at batch 1 0.79 -> 0.66, 0.27 -> 0.21, 0.09 -> 0.09 ms; at
// batch 8 14.2 -> 8.7, 3.8 -> 3.1, 1.0 -> 0.8 and 0.84 -> 1.57 ms (rows of 8: too short); but
// MobileNetV3-small's 16x112x112 after a hardswish, batch 8, 1.05 -> 1.23 ms (its 72x56x56 1.12 ->
// 1.01 ms). DEBUG=2 kernel minima over 6 replays, avx2, one thread, loaded machine.
constexpr int64_t kMinPhaseRow = 16;

// split_input's rows xs copied into one buffer, channel-major or channels last: x padded whole to
// [N, C, *T], T_i = s_i times xs's rows, copied and viewed as xs. The copy's loops then run along
// whole padded rows, masked at their ends only, which the renderer splits off; a copy of xs's view
// itself ends in the loops [R_i, s_i], its innermost one s_i long, masked throughout. MobileNetV2's
// 96x112x112 at stride 2, 1.11 -> 0.36 ms; MobileNetV3-small's 16x112x112 at stride 2, batch 8,
// 3.5 -> 0.43 ms (kernel minima over 3 replays, DEBUG=2, avx2, one thread, loaded machine).
// The padding (before, after, from the last dim) that takes x [N, C, *S] to [N, C, *T], T_i = s_i
// times split_input's rows xs.
IntList whole_rows(const Tensor& x, const Split& xs, const Taps& g) {
  IntList pad;
  for (size_t i = g.stride.size(); i-- > 0;) {
    const int64_t d = static_cast<int64_t>(i), s = g.stride[i], S = x.size(2 + d);
    const int64_t before = xs.rows_lo[i] * s, whole = xs.xs.size(2 + 2 * d) * s;
    pad.push_back(before);
    pad.push_back(whole - S - before);
  }
  return pad;
}

Tensor copied_rows(const Tensor& x, const Split& xs, const Taps& g, bool channels_last) {
  Tensor p = constant_pad_nd(x, whole_rows(x, xs, g));
  const int64_t r = p.dim();
  p = channels_last ? p.permute(to_last(r)).contiguous().permute(from_last(r)) : p.contiguous();
  return p.reshape(xs.xs.shape());
}

// The depthwise tap sum with one filter per channel over xs, split_input's rows stored channels
// last: y[n, *o, c] = sum over the taps t of tap_t[n, c, *o] * w[c, t] (+ bias[c]), stored [N, *O,
// C] so that its innermost loop runs along the channels (unit strides, whole vectors however small
// the map: MobileNetV3's 5x5 on 576x7x7 reads 7-element rows channel-major), viewed as
// [N, C, 1, *O].
Tensor channelwise_sum(const Split& xs, const Tensor& w, const Tensor& bias, const Taps& g) {
  const int64_t C = w.size(0), rank = static_cast<int64_t>(g.out.size()) + 2;
  Shape wk(static_cast<size_t>(rank) - 1, 1);
  wk.push_back(C);  // a tap's weights as [1, 1..., C]
  Tensor wt = w.reshape({C, -1}).transpose(0, 1).contiguous(), y;  // [K, C]: unit strides along C
  const std::vector<IntList> js = tap_indices(g.kernel);
  for (size_t t = 0; t < js.size(); t++) {
    Tensor term = tap(xs, js[t], g).permute(to_last(rank)) *
                  wt.narrow(0, static_cast<int64_t>(t), 1).reshape(wk);
    y = y.defined() ? y + term : term;
  }
  if (bias.defined()) y = y + bias.reshape(wk);
  Shape out = {y.size(0), C, 1};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return y.contiguous().permute(from_last(rank)).reshape(out);
}

// Channels per block of blocked_sum's layout: one AVX2 vector of floats.
constexpr int64_t kBlock = 8;

// The depthwise tap sum with one filter per channel, C a multiple of kBlock, in blocks of kBlock
// channels: x viewed as [N, C / kBlock, kBlock, *S], padded to whole rows of the stride
// (whole_rows) and copied once into [N, C / kBlock, *T, kBlock], read as split_input's rows of
// [N C / kBlock, kBlock, *S]; y[n, b, *o, l] = sum over the taps t of
// x[n, b kBlock + l, o s + t - lo] * w[b kBlock + l, t] (+ bias) stored [N, C / kBlock, *O,
// kBlock], then copied to [N, C, *O] and viewed as [N, C, 1, *O]. The sum's innermost loop is one
// vector of a block's channels and its window slides over the block's own map, which stays in L1;
// channels last ([N, *O, C], channelwise_sum), each output position reads its taps' rows across
// all C channels from L2. MobileNetV3-small at batch 8, copy and sum, channels last -> blocked:
// its two 5x5s on 240x14x14, 1.10 + 2.18 -> 1.00 + 1.33 ms; on 576x7x7, 1.45 + 1.55 -> 1.28 +
// 0.83 ms; the copies back to NCHW 0.1-0.2 ms each (CPU time per replay, perf samples, minima over
// 4 alternated runs, avx2, one thread, loaded machine).
Tensor blocked_sum(const Tensor& x, const Tensor& w, const Tensor& bias, const Taps& g) {
  const int64_t N = x.size(0), C = x.size(1), B = C / kBlock, rank = x.dim();
  Split xs = split_input(x, g);
  Shape blocks = {N, B, kBlock};  // x as [N, B, kBlock, *S], then padded to [N, B, kBlock, *T]
  blocks.insert(blocks.end(), x.sizes().begin() + 2, x.sizes().end());
  const Tensor p = constant_pad_nd(x.reshape(blocks), whole_rows(x, xs, g));
  std::vector<int64_t> last = {0, 1}, back = {0, 1, rank};  // kBlock moved last, and back
  for (int64_t i = 3; i <= rank; i++) last.push_back(i);
  last.push_back(2);
  for (int64_t i = 2; i < rank; i++) back.push_back(i);
  Shape rows = xs.xs.shape();  // the copy as split_input's rows of x [N B, kBlock, *S]
  rows[0] = N * B;
  rows[1] = kBlock;
  xs.xs = p.permute(last).contiguous().permute(back).reshape(rows);
  // A tap as [N, B, *O, kBlock]; its weights as [1, B, 1..., kBlock].
  Shape split = {N, B}, wk = {1, B};
  split.insert(split.end(), g.out.begin(), g.out.end());
  split.push_back(kBlock);
  wk.insert(wk.end(), g.out.size(), 1);
  wk.push_back(kBlock);
  Tensor wt = w.reshape({C, -1}).transpose(0, 1).contiguous(), y;  // [K, C]
  const std::vector<IntList> js = tap_indices(g.kernel);
  for (size_t t = 0; t < js.size(); t++) {
    Tensor term = tap(xs, js[t], g).permute(to_last(rank)).reshape(split) *
                  wt.narrow(0, static_cast<int64_t>(t), 1).reshape(wk);
    y = y.defined() ? y + term : term;
  }
  if (bias.defined()) y = y + bias.reshape(wk);
  Shape out = {N, C, 1};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return y.contiguous().permute(back).contiguous().reshape(out);
}

}  // namespace

// A depthwise convolution without gradients (Cg = 1): x [N, C, *S] -> [N, G, OCg, *O] plus bias,
// the sum over the taps of tap * w[tap], each tap a shifted view of split_input's rows (tap()).
// Where x is computed (a producer's bias, activation, transpose to NCHW; not stored()), the taps
// read one copy of the rows: views of x would compute the producer again per tap behind the
// padding's masks (MobileNetV2's 3x3, 32x112x112: 2.7 ms as views, 0.3 ms as copy and sum; DEBUG=2,
// avx2, one thread). With one filter per channel, on maps up to kMaxChannelsLastMap read from a
// small or a channels-last input, that copy and the sum are channels-last ([N, *S, C],
// channelwise_sum) where the input is channels-last or the kernel larger than kMaxChannelMajorTaps
// (the latter in blocks of kBlock channels, blocked_sum, where C is a multiple of kBlock);
// else channel-major, the copy phase-major at a stride where its rows are kMinPhaseRow or longer.
// A buffer padded at stride 1 is copied too
// (144x56x56: 0.45 ms against 0.6-0.8 ms); a buffer read at a stride takes the views (96x112x112
// at stride 2: 1.3 ms against 2.0 ms copied, 2.5 ms copied phase-major so that the taps read unit
// strides). The padding's masks cut only the ends of the innermost loop, which the renderer splits
// off (render_c.cpp: split_last_loop).
Tensor depthwise(const Tensor& x, const Tensor& w, const Tensor& bias, const Taps& g,
                 int64_t groups) {
  const int64_t OCg = w.size(0) / groups;
  Split xs = split_input(x, g);
  bool strided = false, padded = false;
  for (size_t i = 0; i < g.stride.size(); i++) {
    strided = strided || g.stride[i] > 1;
    padded = padded || g.lo[i] != 0 || g.hi[i] != 0;
  }
  const int64_t S = product(IntList(x.sizes().begin() + 2, x.sizes().end()));
  const bool last = channels_last_source(x);
  if (OCg == 1 && !stored(x) && product(g.out) <= kMaxChannelsLastMap &&
      (S <= kMaxChannelsLastMap || last) && (last || product(g.kernel) > kMaxChannelMajorTaps)) {
    if (!last && x.size(1) % kBlock == 0) return blocked_sum(x, w, bias, g);
    xs.xs = copied_rows(x, xs, g, true);
    return channelwise_sum(xs, w, bias, g);
  }
  const int64_t row = xs.xs.size(xs.xs.dim() - 2);  // the rows of the last dim
  if (!stored(x) && strided && row >= kMinPhaseRow)
    xs.xs = phase_major(xs.xs);
  else if (!stored(x) || (padded && !strided))
    xs.xs = copied_rows(x, xs, g, false);
  Shape grouped = {x.size(0), groups, 1}, wk = {1, groups, OCg};
  grouped.insert(grouped.end(), g.out.begin(), g.out.end());  // [N, G, 1, *O]
  wk.insert(wk.end(), g.out.size(), 1);                       // [1, G, OCg, 1...]
  Tensor wt = w.reshape({groups, OCg, -1}), y;
  const std::vector<IntList> js = tap_indices(g.kernel);
  for (size_t t = 0; t < js.size(); t++) {
    const int64_t ti = static_cast<int64_t>(t);
    Tensor term = tap(xs, js[t], g).reshape(grouped) * wt.narrow(2, ti, 1).reshape(wk);
    y = y.defined() ? y + term : term;
  }
  Shape b = {groups, OCg};
  b.insert(b.end(), g.out.size(), 1);  // bias as [G, OCg, 1...]
  return bias.defined() ? y + bias.reshape(b) : y;
}

}  // namespace ember::detail
