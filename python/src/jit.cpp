// ember._ember._jit: ember::Jit (ember/jit.h) over a Python function of tensors, for the
// decorator ember.jit. The call runs without the GIL; the function, which runs only on the calls
// that are not replays (the first, the capture, and a capture again after a change of
// signature), takes it back. Its exceptions pass through the jit to the caller unchanged.
#include <pybind11/stl.h>

#include <memory>
#include <vector>

#include "bindings.h"
#include "ember/jit.h"

namespace ember::python {

namespace {

// The function as ember::Jit calls it: a Python callable that takes the input tensors as a list
// and returns a list of tensors (ember/jit.py packs and unpacks the user's arguments).
Jit::Fn python_fn(py::function fn) {
  // The std::function may be destroyed by a thread without the GIL: drop the reference under it.
  std::shared_ptr<py::function> guarded(new py::function(std::move(fn)), [](py::function* f) {
    py::gil_scoped_acquire gil;
    delete f;
  });
  return [guarded](const std::vector<Tensor>& inputs) {
    py::gil_scoped_acquire gil;
    return (*guarded)(inputs).cast<std::vector<Tensor>>();
  };
}

}  // namespace

void register_jit(py::module_& m) {
  py::module_ j = m.def_submodule("_jit", "ember.jit's C++ parts");
  py::class_<Jit>(j, "Jit")
      .def(
          py::init([](py::function fn) { return std::make_unique<Jit>(python_fn(std::move(fn))); }),
          py::arg("fn"))
      .def(
          "__call__",
          [](Jit& jit, const std::vector<Tensor>& inputs) {
            py::gil_scoped_release released;
            return jit(inputs);
          },
          py::arg("inputs"))
      .def("reset", &Jit::reset)
      .def_property_readonly("calls", &Jit::calls)
      .def_property_readonly("replays", &Jit::replays)
      .def_property_readonly("captured_launches", &Jit::captured_launches)
      .def_property_readonly("planned_bytes", &Jit::planned_bytes);
}

}  // namespace ember::python
