// The module parity cases' shared steps: ember's and libtorch's state dicts by name, ember's
// state copied into the libtorch module, and one tensor compared against the other
// (tests/parity/module_state.cpp).
#pragma once
#include <torch/torch.h>

#include <map>
#include <string>

#include "ember/nn.h"
#include "parity.h"

namespace parity {

/// A module's parameters and buffers by their dotted names.
std::map<std::string, ember::Tensor> ember_state(const ember::nn::Module& m);
/// The same for a libtorch module; undefined entries (an unused projection) are left out.
std::map<std::string, torch::Tensor> torch_state(const torch::nn::Module& m);

/// Both modules' floating state to float64: ember's by Module::to, libtorch's by set_data on its
/// floating tensors only (libtorch's C++ to() would convert num_batches_tracked as well, where
/// PyTorch's Module.to and ember keep it int64).
void to_float64(ember::nn::Module& e, torch::nn::Module& t);

/// ember's values as a torch tensor of the same dtype (float32, float64 or int64).
torch::Tensor to_torch(const ember::Tensor& t);

/// Copies ember's state into torch's; both must have the same names and shapes (a gtest
/// failure otherwise).
void copy_state(const ember::nn::Module& e, torch::nn::Module& t);

/// Whether e and t are both undefined or hold the same values within tol (a gtest failure
/// naming `what` otherwise).
void expect_same(const ember::Tensor& e, const torch::Tensor& t, const std::string& what, Tol tol);

}  // namespace parity
