// The extension module ember._ember: dtypes, the Tensor class, creation functions, the random
// seed and grad mode. ember/__init__.py gives them PyTorch's Python signatures (zeros(2, 3),
// tensor([[1, 2]]), `with ember.no_grad():`).
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings.h"
#include "ember/grad_mode.h"

namespace ember::python {

namespace {

TensorOptions options(std::optional<ScalarType> dtype, bool requires_grad) {
  TensorOptions o;
  if (dtype) o = o.dtype(*dtype);
  return o.requires_grad(requires_grad);
}

void define_dtypes(py::module_& m) {
  py::enum_<ScalarType> d(m, "dtype");
  for (ScalarType t : {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kUInt16, kUInt32, kUInt64,
                       kFloat16, kBFloat16, kFloat32, kFloat64}) {
    d.value(dtype_name(t), t);
    m.attr(dtype_name(t)) = t;
  }
  // Replaced, not overloaded (def would add an overload behind enum_'s own).
  const auto name = [](ScalarType t) { return std::string("ember.") + dtype_name(t); };
  d.attr("__repr__") = py::cpp_function(name, py::is_method(d));
  d.attr("__str__") = py::cpp_function(name, py::is_method(d));
  d.def_property_readonly("is_floating_point", [](ScalarType t) {
     return is_floating_point(t);
   }).def_property_readonly("itemsize", [](ScalarType t) { return element_size(t); });
}

void define_creation(py::module_& m) {
  const auto shape_fn = [&](const char* name, Tensor (*f)(IntList, TensorOptions)) {
    m.def(
        name,
        [f](IntList shape, std::optional<ScalarType> dtype, bool requires_grad) {
          return f(std::move(shape), options(dtype, requires_grad));
        },
        py::arg("shape"), py::arg("dtype") = py::none(), py::arg("requires_grad") = false);
  };
  shape_fn("_zeros", &zeros);
  shape_fn("_ones", &ones);
  shape_fn("_rand", &rand);
  shape_fn("_randn", &randn);
  m.def(
      "_arange",
      [](py::handle start, py::handle end, py::handle step, std::optional<ScalarType> dtype,
         bool requires_grad) {
        auto scalar = [](py::handle h, const char* what) {
          if (auto s = as_scalar(h)) return *s;
          throw py::type_error(std::string("arange: ") + what + " must be a number");
        };
        return arange(scalar(start, "start"), scalar(end, "end"), scalar(step, "step"),
                      options(dtype, requires_grad));
      },
      py::arg("start"), py::arg("end"), py::arg("step"), py::arg("dtype") = py::none(),
      py::arg("requires_grad") = false);
  m.def("_from_numpy_copy", &from_numpy_copy, py::arg("array"));
  m.def("_from_numpy_shared", &from_numpy_shared, py::arg("array"));
  m.def(
      "manual_seed", [](uint64_t seed) { manual_seed(seed); }, py::arg("seed"));
}

// Grad mode for ember.no_grad: a guard entered and left by the Python context manager.
struct GradGuard {
  std::unique_ptr<NoGradGuard> guard;
};

void define_grad_mode(py::module_& m) {
  py::class_<GradGuard>(m, "_NoGradGuard")
      .def(py::init<>())
      .def("enter", [](GradGuard& g) { g.guard = std::make_unique<NoGradGuard>(); })
      .def("exit", [](GradGuard& g) { g.guard.reset(); });
}

}  // namespace
}  // namespace ember::python

PYBIND11_MODULE(_ember, m) {
  using namespace ember::python;
  m.doc() = "ember's C++ core (the Python API is the package ember)";
  register_errors();
  define_dtypes(m);
  py::class_<ember::Tensor> tensor = register_tensor(m);
  register_dlpack(m, tensor);
  register_nn(m);
  register_optim(m);
  register_io(m);
  register_envs(m);
  register_ppo(m);
  register_jit(m);
  register_onnx(m);
  define_creation(m);
  define_grad_mode(m);
}
