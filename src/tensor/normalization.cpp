// Normalisations as compositions (include/ember/normalization.h).
#include "ember/normalization.h"

#include <string>

#include "ember/grad_mode.h"
#include "ember/support/shape_str.h"

namespace ember {

namespace {

std::string str(const DimVector& s) { return support::shape_str(s); }

// [C] -> [1, C, 1, ...] for an input of `rank` dims.
Tensor per_channel(const Tensor& v, int64_t rank, int64_t C, const char* what) {
  if (v.dim() != 1 || v.size(0) != C)
    throw ShapeError(std::string(what) + " must have shape [" + std::to_string(C) + "], got " +
                     str(v.sizes()));
  Shape s(static_cast<size_t>(rank), 1);
  s[1] = C;
  return v.reshape(s);
}

Tensor affine(Tensor y, const Tensor& weight, const Tensor& bias, int64_t C) {
  if (weight.defined()) y = y * per_channel(weight, y.dim(), C, "weight");
  if (bias.defined()) y = y + per_channel(bias, y.dim(), C, "bias");
  return y;
}

std::vector<int64_t> dims_except(int64_t rank, int64_t keep) {
  std::vector<int64_t> d;
  for (int64_t i = 0; i < rank; i++)
    if (i != keep) d.push_back(i);
  return d;
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps) {
  if (x.dim() < 2)
    throw ShapeError("batch_norm: input must have at least 2 dims, got " + str(x.sizes()));
  const int64_t C = x.size(1), rank = x.dim();
  Tensor mean, var;
  if (training) {
    const auto dims = dims_except(rank, 1);
    mean = x.mean(dims, true);
    var = x.var(dims, false, true);
    const int64_t n = x.numel() / C;
    if (running_mean.defined() || running_var.defined()) {
      NoGradGuard no_grad;
      Tensor rm = running_mean, rv = running_var;  // handles of the same tensors
      if (rm.defined()) rm.copy_(rm * (1 - momentum) + mean.detach().reshape({C}) * momentum);
      if (rv.defined())
        rv.copy_(rv * (1 - momentum) +
                 var.detach().reshape({C}) * (momentum * n / std::max<int64_t>(n - 1, 1)));
    }
  } else {
    if (!running_mean.defined() || !running_var.defined())
      throw ValueError("batch_norm: inference needs running_mean and running_var");
    mean = per_channel(running_mean, rank, C, "running_mean");
    var = per_channel(running_var, rank, C, "running_var");
  }
  return affine((x - mean) * (var + eps).rsqrt(), weight, bias, C);
}

Tensor layer_norm(const Tensor& x, IntList shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const int64_t k = static_cast<int64_t>(shape.size());
  if (k == 0 || k > x.dim() || Shape(x.sizes().end() - k, x.sizes().end()) != shape)
    throw ShapeError("layer_norm: normalized_shape " + support::shape_str(shape) +
                     " does not match the last dims of input " + str(x.sizes()));
  std::vector<int64_t> dims;
  for (int64_t i = x.dim() - k; i < x.dim(); i++) dims.push_back(i);
  Tensor y = (x - x.mean(dims, true)) * (x.var(dims, false, true) + eps).rsqrt();
  for (const Tensor* p : {&weight, &bias})
    if (p->defined() && p->shape() != shape)
      throw ShapeError("layer_norm: weight and bias must have shape " + support::shape_str(shape) +
                       ", got " + str(p->sizes()));
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  if (x.dim() < 2)
    throw ShapeError("group_norm: input must have at least 2 dims, got " + str(x.sizes()));
  const int64_t N = x.size(0), C = x.size(1);
  if (groups <= 0 || C % groups)
    throw ValueError("group_norm: " + std::to_string(C) + " channels are not divisible by " +
                     std::to_string(groups) + " groups");
  Tensor g = x.reshape({N, groups, -1});
  Tensor y =
      ((g - g.mean({2}, true)) * (g.var({2}, false, true) + eps).rsqrt()).reshape(x.sizes().vec());
  return affine(y, weight, bias, C);
}

Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  if (x.dim() < 3)
    throw ShapeError("instance_norm: input must have at least 3 dims, got " + str(x.sizes()));
  std::vector<int64_t> dims;
  for (int64_t i = 2; i < x.dim(); i++) dims.push_back(i);
  Tensor y = (x - x.mean(dims, true)) * (x.var(dims, false, true) + eps).rsqrt();
  return affine(y, weight, bias, x.size(1));
}

}  // namespace ember
