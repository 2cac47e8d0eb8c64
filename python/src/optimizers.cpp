// ember._ember._optim: ember's optimizers (ember/optim/optimizer.h) over tensors held by Python.
// A parameter is a handle on the same tensor as the Python object, so step() updates the
// module's parameters in place (their buffers kept). step() runs without the GIL.
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings.h"
#include "ember/optim.h"
#include "ember/optim/serialize.h"

namespace ember::python {

namespace {

void check_params(const std::vector<Tensor>& params, const char* who) {
  if (params.empty()) throw py::value_error(std::string(who) + ": got an empty parameter list");
  for (const Tensor& p : params)
    if (!p.requires_grad())
      throw py::value_error(std::string(who) + ": a parameter does not require grad");
}

}  // namespace

void register_optim(py::module_& m) {
  py::module_ o = m.def_submodule("_optim", "ember.optim's C++ parts");
  py::class_<optim::Optimizer, std::shared_ptr<optim::Optimizer>>(o, "Optimizer")
      .def("step", &optim::Optimizer::step, py::call_guard<py::gil_scoped_release>())
      .def("zero_grad", &optim::Optimizer::zero_grad)
      .def_property("lr", &optim::Optimizer::lr, &optim::Optimizer::set_lr)
      .def("state", &optim::Optimizer::state)
      // A safetensors checkpoint of state() with the learning rate (metadata "lr").
      .def(
          "save", [](const optim::Optimizer& o, const std::string& path) { ember::save(o, path); },
          py::arg("path"), py::call_guard<py::gil_scoped_release>());
  py::class_<optim::SGD, optim::Optimizer, std::shared_ptr<optim::SGD>>(o, "SGD").def(
      py::init([](std::vector<Tensor> params, double lr, double momentum, double dampening,
                  double weight_decay, bool nesterov) {
        check_params(params, "SGD");
        optim::SGDOptions opt(lr);
        opt.momentum = momentum;
        opt.dampening = dampening;
        opt.weight_decay = weight_decay;
        opt.nesterov = nesterov;
        return std::make_shared<optim::SGD>(std::move(params), opt);
      }),
      py::arg("params"), py::arg("lr"), py::arg("momentum") = 0.0, py::arg("dampening") = 0.0,
      py::arg("weight_decay") = 0.0, py::arg("nesterov") = false);
  const auto adam_options = [](double lr, std::pair<double, double> betas, double eps,
                               double weight_decay) {
    optim::AdamOptions opt(lr);
    opt.betas(betas.first, betas.second);
    opt.eps = eps;
    opt.weight_decay = weight_decay;
    return opt;
  };
  py::class_<optim::Adam, optim::Optimizer, std::shared_ptr<optim::Adam>>(o, "Adam").def(
      py::init([adam_options](std::vector<Tensor> params, double lr,
                              std::pair<double, double> betas, double eps, double weight_decay) {
        check_params(params, "Adam");
        return std::make_shared<optim::Adam>(std::move(params),
                                             adam_options(lr, betas, eps, weight_decay));
      }),
      py::arg("params"), py::arg("lr") = 1e-3, py::arg("betas") = std::pair(0.9, 0.999),
      py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.0);
  py::class_<optim::AdamW, optim::Adam, std::shared_ptr<optim::AdamW>>(o, "AdamW")
      .def(py::init([adam_options](std::vector<Tensor> params, double lr,
                                   std::pair<double, double> betas, double eps,
                                   double weight_decay) {
             check_params(params, "AdamW");
             return std::make_shared<optim::AdamW>(std::move(params),
                                                   adam_options(lr, betas, eps, weight_decay));
           }),
           py::arg("params"), py::arg("lr") = 1e-3, py::arg("betas") = std::pair(0.9, 0.999),
           py::arg("eps") = 1e-8, py::arg("weight_decay") = 1e-2);
}

}  // namespace ember::python
