// RoiAlign (the bilinear sampling positions depend on the boxes, read on the host; the input is
// then one matrix product with the sampling weights) and TfIdfVectorizer on integer inputs
// (n-gram counting over the realized input, on the host).
#include <cmath>
#include <map>

#include "common.h"

namespace ember::onnx::ops {
// RoiAlign-16 (avg mode): each output bin averages grid_h x grid_w bilinear samples of its box
// (Mask R-CNN's RoIAlign: He et al. 2017; the torchvision and ONNX reference arithmetic).
std::vector<Tensor> roi_align(OpContext& c) {
  const Tensor& x = c.in(0);  // [N, C, H, W]
  const auto rois = c.floats_of(1);
  const auto batch = c.ints_of(2);
  if (c.attr_string("mode", "avg") != "avg")
    throw UnsupportedError("RoiAlign mode max is not supported");
  const bool half_pixel =
      c.attr_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  const int64_t PH = c.attr_int("output_height", 1), PW = c.attr_int("output_width", 1);
  const int64_t ratio = c.attr_int("sampling_ratio", 0);
  const double scale = c.attr_float("spatial_scale", 1.0);
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3),
                R = static_cast<int64_t>(batch.size());
  // Sampling matrix [R * PH * PW, N * H * W].
  std::vector<double> m(static_cast<size_t>(R * PH * PW * N * H * W), 0.0);
  for (int64_t r = 0; r < R; r++) {
    const double off = half_pixel ? 0.5 : 0.0;
    const double x0 = rois[r * 4] * scale - off, y0 = rois[r * 4 + 1] * scale - off;
    double rw = rois[r * 4 + 2] * scale - off - x0, rh = rois[r * 4 + 3] * scale - off - y0;
    if (!half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bh = rh / static_cast<double>(PH), bw = rw / static_cast<double>(PW);
    const int64_t gh =
        ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(PH)));
    const int64_t gw =
        ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(PW)));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    const int64_t b = batch[r];
    if (b < 0 || b >= N) throw IndexError("batch index " + std::to_string(b) + " is out of range");
    for (int64_t ph = 0; ph < PH; ph++)
      for (int64_t pw = 0; pw < PW; pw++) {
        double* row = &m[static_cast<size_t>(((r * PH + ph) * PW + pw) * N * H * W + b * H * W)];
        for (int64_t iy = 0; iy < gh; iy++)
          for (int64_t ix = 0; ix < gw; ix++) {
            double y = y0 + ph * bh + (iy + 0.5) * bh / static_cast<double>(gh);
            double xx = x0 + pw * bw + (ix + 0.5) * bw / static_cast<double>(gw);
            if (y < -1.0 || y > H || xx < -1.0 || xx > W) continue;
            y = std::max(y, 0.0), xx = std::max(xx, 0.0);
            int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(xx), yh, xh;
            if (yl >= H - 1)
              yh = yl = H - 1, y = static_cast<double>(yl);
            else
              yh = yl + 1;
            if (xl >= W - 1)
              xh = xl = W - 1, xx = static_cast<double>(xl);
            else
              xh = xl + 1;
            const double ly = y - yl, lx = xx - xl, hy = 1 - ly, hx = 1 - lx;
            row[yl * W + xl] += hy * hx / count;
            row[yl * W + xh] += hy * lx / count;
            row[yh * W + xl] += ly * hx / count;
            row[yh * W + xh] += ly * lx / count;
          }
      }
  }
  Tensor mat = from_vector(m, Shape{R * PH * PW, N * H * W}).to(x.dtype());
  Tensor flat = x.permute({0, 2, 3, 1}).reshape({N * H * W, C});
  return one(mat.matmul(flat).reshape({R, PH, PW, C}).permute({0, 3, 1, 2}));
}

// TfIdfVectorizer: counts of the pool's n-grams (lengths min..max, items up to max_skip_count
// apart) per row, weighted by mode TF (counts), IDF (weights where present) or TFIDF.
std::vector<Tensor> tfidf(OpContext& c) {
  const Tensor& x = c.in(0);
  if (x.is_floating_point()) throw DTypeError("TfIdfVectorizer takes integer or string inputs");
  if (c.has_attr("pool_strings")) throw UnsupportedError("element type string is not supported");
  const auto data = x.to_vector<int64_t>();
  const int64_t lo = c.attr_int("min_gram_length"), hi = c.attr_int("max_gram_length"),
                skip = c.attr_int("max_skip_count");
  const std::string mode = c.attr_string("mode");
  const auto counts = c.attr_ints("ngram_counts"), indexes = c.attr_ints("ngram_indexes"),
             pool = c.attr_ints("pool_int64s");
  const auto weights = c.attr_floats("weights", std::vector<double>{});
  int64_t out_size = 0;
  for (auto i : indexes) out_size = std::max(out_size, i + 1);
  // The pool's n-grams: length n starts at counts[n - 1] (items), one output index each.
  std::map<std::vector<int64_t>, int64_t> grams;
  size_t k = 0;
  for (size_t n = 1; n <= counts.size(); n++) {
    const int64_t start = counts[n - 1],
                  end = n < counts.size() ? counts[n] : static_cast<int64_t>(pool.size());
    for (int64_t p = start; p + static_cast<int64_t>(n) <= end; p += static_cast<int64_t>(n), k++)
      grams[std::vector<int64_t>(pool.begin() + p, pool.begin() + p + static_cast<int64_t>(n))] =
          indexes.at(k);
  }
  const int64_t rows = x.dim() == 2 ? x.size(0) : 1, len = x.dim() == 2 ? x.size(1) : x.numel();
  std::vector<double> out(static_cast<size_t>(rows * out_size), 0.0);
  for (int64_t r = 0; r < rows; r++) {
    const int64_t* v = &data[static_cast<size_t>(r * len)];
    for (int64_t n = lo; n <= hi; n++)
      for (int64_t s = 0; s <= (n == 1 ? 0 : skip); s++)
        for (int64_t i = 0; i + (n - 1) * (s + 1) < len; i++) {
          std::vector<int64_t> g;
          for (int64_t j = 0; j < n; j++) g.push_back(v[i + j * (s + 1)]);
          auto it = grams.find(g);
          if (it != grams.end()) out[static_cast<size_t>(r * out_size + it->second)] += 1;
        }
  }
  // weights[k] belongs to the pool's k-th n-gram, whose output index is ngram_indexes[k].
  std::vector<double> w_of(static_cast<size_t>(out_size), 1.0);
  for (size_t j = 0; j < weights.size() && j < indexes.size(); j++) w_of[indexes[j]] = weights[j];
  for (size_t i = 0; i < out.size(); i++) {
    const double w = w_of[i % static_cast<size_t>(out_size)];
    if (mode == "IDF")
      out[i] = out[i] > 0 ? w : 0;
    else if (mode == "TFIDF")
      out[i] *= w;
    else if (mode != "TF")
      throw ValueError("mode must be TF, IDF or TFIDF, got '" + mode + "'");
  }
  Shape s = x.dim() == 2 ? Shape{rows, out_size} : Shape{out_size};
  return one(from_vector(std::vector<float>(out.begin(), out.end()), s));
}

}  // namespace ember::onnx::ops
