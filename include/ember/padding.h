// ember/padding.h — padding with a mode (torch::nn::functional::pad's modes). The constant mode
// is ember::pad / constant_pad_nd (ember/tensor.h); this adds the modes that copy elements.
#pragma once
#include "ember/tensor.h"

namespace ember {

enum class PadMode {
  Constant,   // the fill value
  Reflect,    // mirrored without repeating the edge: [a b c] -> b | a b c | b
  Replicate,  // the edge element repeated ("edge" in ONNX, numpy): a | a b c | c
  Circular,   // wrapped around: c | a b c | a
};

/// Pads `t` by (before, after) pairs starting from the LAST dim (F.pad's convention), in `mode`;
/// negative amounts crop. Reflect needs each pad < the dim's size (after cropping), Replicate
/// and Circular a non-empty dim and Circular each pad <= its size: ValueError otherwise.
/// Views and copies only: the gradient of a copied element flows to its source.
Tensor pad(const Tensor& t, IntList pad, PadMode mode, const Scalar& value = 0);

}  // namespace ember
