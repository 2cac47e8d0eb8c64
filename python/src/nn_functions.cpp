// ember._ember._nn: what ember.nn (python/ember/nn) builds its modules on: the parameters of
// C++ modules made by their own constructors (the same initialisation, and the same random
// draws, as the C++ modules), and the functional ops and losses (ember/nn/functional.h,
// ember/activations.h). The modules themselves are Python classes over these.
#include <pybind11/stl.h>

#include <string>

#include "bindings.h"
#include "ember/activations.h"
#include "ember/dropout.h"
#include "ember/nn.h"

namespace ember::python {

namespace {

namespace F = nn::functional;

Tensor or_undefined(const std::optional<Tensor>& t) { return t.value_or(Tensor()); }

void define_parameters(py::module_& m) {
  // (weight [out, in], bias [out] or None), drawn as nn::Linear draws them.
  m.def(
      "linear_parameters",
      [](int64_t in_features, int64_t out_features, bool bias) {
        nn::LinearImpl l(in_features, out_features, bias);
        return py::make_tuple(l.weight, l.bias.defined() ? py::cast(l.bias) : py::none());
      },
      py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true);
}

void define_activations(py::module_& m) {
  m.def(
      "linear",
      [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
        return linear(x, w, or_undefined(b));
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
  m.def(
      "gelu", [](const Tensor& x, const std::string& a) { return gelu(x, a); }, py::arg("input"),
      py::arg("approximate") = "none");
  m.def(
      "silu", [](const Tensor& x) { return silu(x); }, py::arg("input"));
  m.def(
      "softplus",
      [](const Tensor& x, double beta, double threshold) { return softplus(x, beta, threshold); },
      py::arg("input"), py::arg("beta") = 1.0, py::arg("threshold") = 20.0);
  m.def(
      "leaky_relu", [](const Tensor& x, double s) { return leaky_relu(x, s); }, py::arg("input"),
      py::arg("negative_slope") = 0.01);
  m.def(
      "softmax", [](const Tensor& x, int64_t dim) { return softmax(x, dim); }, py::arg("input"),
      py::arg("dim"));
  m.def(
      "log_softmax", [](const Tensor& x, int64_t dim) { return log_softmax(x, dim); },
      py::arg("input"), py::arg("dim"));
  m.def(
      "dropout", [](const Tensor& x, double p, bool train) { return dropout(x, p, train); },
      py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true);
}

void define_losses(py::module_& m) {
  m.def(
      "mse_loss",
      [](const Tensor& x, const Tensor& t, const std::string& r) { return F::mse_loss(x, t, r); },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean");
  m.def(
      "smooth_l1_loss",
      [](const Tensor& x, const Tensor& t, const std::string& r, double beta) {
        return F::smooth_l1_loss(x, t, r, beta);
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean", py::arg("beta") = 1.0);
  m.def(
      "nll_loss",
      [](const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, int64_t ignore,
         const std::string& r) {
        return F::nll_loss(
            x, t,
            F::NLLLossFuncOptions().weight(or_undefined(w)).ignore_index(ignore).reduction(r));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("ignore_index") = -100, py::arg("reduction") = "mean");
  m.def(
      "cross_entropy",
      [](const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, int64_t ignore,
         const std::string& r, double smoothing) {
        return F::cross_entropy(x, t,
                                F::CrossEntropyFuncOptions()
                                    .weight(or_undefined(w))
                                    .ignore_index(ignore)
                                    .reduction(r)
                                    .label_smoothing(smoothing));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("ignore_index") = -100, py::arg("reduction") = "mean",
      py::arg("label_smoothing") = 0.0);
  m.def(
      "binary_cross_entropy",
      [](const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, const std::string& r) {
        return F::binary_cross_entropy(
            x, t, F::BinaryCrossEntropyFuncOptions().weight(or_undefined(w)).reduction(r));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("reduction") = "mean");
  m.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& x, const Tensor& t, const std::optional<Tensor>& w, const std::string& r,
         const std::optional<Tensor>& pos_weight) {
        return F::binary_cross_entropy_with_logits(x, t,
                                                   F::BinaryCrossEntropyWithLogitsFuncOptions()
                                                       .weight(or_undefined(w))
                                                       .reduction(r)
                                                       .pos_weight(or_undefined(pos_weight)));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("reduction") = "mean", py::arg("pos_weight") = py::none());
}

// nn.init's initialisers: in place on the tensor (a parameter keeps its buffer), which they
// return.
void define_init(py::module_& m) {
  using Init1 = Tensor& (*)(Tensor&, double);
  const auto one = [&](const char* name, Init1 f, const char* arg, double value) {
    m.def(
        name, [f](Tensor& t, double a) -> Tensor& { return f(t, a); }, py::arg("tensor"),
        py::arg(arg) = value, py::return_value_policy::reference);
  };
  one("orthogonal_", &nn::init::orthogonal_, "gain", 1.0);
  one("kaiming_uniform_", &nn::init::kaiming_uniform_, "a", 0.0);
  one("xavier_uniform_", &nn::init::xavier_uniform_, "gain", 1.0);
  one("constant_", &nn::init::constant_, "val", 0.0);
  m.def(
      "uniform_",
      [](Tensor& t, double a, double b) -> Tensor& { return nn::init::uniform_(t, a, b); },
      py::arg("tensor"), py::arg("a") = 0.0, py::arg("b") = 1.0,
      py::return_value_policy::reference);
  m.def(
      "normal_",
      [](Tensor& t, double mean, double std) -> Tensor& { return nn::init::normal_(t, mean, std); },
      py::arg("tensor"), py::arg("mean") = 0.0, py::arg("std") = 1.0,
      py::return_value_policy::reference);
  m.def(
      "zeros_", [](Tensor& t) -> Tensor& { return nn::init::zeros_(t); }, py::arg("tensor"),
      py::return_value_policy::reference);
}

}  // namespace

void register_nn(py::module_& m) {
  py::module_ nn = m.def_submodule("_nn", "ember.nn's C++ parts");
  define_parameters(nn);
  define_init(nn);
  define_activations(nn);
  define_losses(nn);
}

}  // namespace ember::python
