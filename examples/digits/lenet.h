// The digits example's LeNet-style CNN for 8x8 single-channel images: two 3x3 convolutions
// (padding 1) with batch norm, ReLU and 2x2 max pooling, then two linear layers; [N, 1, 8, 8] ->
// [N, 10] logits. Shared by examples/digits/digits.cpp and bench/cnn_step.cpp.
#pragma once
#include "ember/ember.h"

namespace digits {

inline ember::nn::Sequential lenet() {
  namespace nn = ember::nn;
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::BatchNorm2d(16),
                        nn::ReLU(), nn::MaxPool2d(2),  // [16, 4, 4]
                        nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::BatchNorm2d(32),
                        nn::ReLU(), nn::MaxPool2d(2),  // [32, 2, 2]
                        nn::Flatten(), nn::Linear(128, 64), nn::ReLU(), nn::Linear(64, 10));
}

}  // namespace digits
