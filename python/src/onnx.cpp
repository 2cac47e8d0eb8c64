// ember._ember._onnx: the ONNX frontend (ember/onnx/model.h) for ember.onnx, in builds that have
// it (Debian's libonnx-dev; EMBER_PYTHON_ONNX). Loading and running hold no GIL. A file that
// cannot be read or is not a valid model raises OSError (ember's IOError); an op or element type
// ember lacks, or a wrong input, ValueError.
#include "bindings.h"

#ifdef EMBER_PYTHON_ONNX
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "ember/onnx/model.h"
#endif

namespace ember::python {

#ifdef EMBER_PYTHON_ONNX
namespace {

std::vector<std::string> names(const std::vector<onnx::ValueInfo>& values) {
  std::vector<std::string> out;
  for (const onnx::ValueInfo& v : values) out.push_back(v.name);
  return out;
}

}  // namespace

void register_onnx(py::module_& m) {
  py::module_ o = m.def_submodule("_onnx", "ember.onnx's C++ parts");
  py::class_<onnx::Model>(o, "Model")
      .def_property_readonly("input_names",
                             [](const onnx::Model& model) { return names(model.inputs()); })
      .def_property_readonly("output_names",
                             [](const onnx::Model& model) { return names(model.outputs()); })
      .def_property_readonly("opsets", &onnx::Model::opsets)
      .def_property_readonly("producer", &onnx::Model::producer)
      .def("unsupported_ops", &onnx::Model::unsupported_ops)
      .def(
          "run",
          [](const onnx::Model& model, const NamedTensors& inputs) { return model.run(inputs); },
          py::arg("inputs"), py::call_guard<py::gil_scoped_release>());
  o.def(
      "load", [](const std::string& path) { return onnx::load(path); }, py::arg("path"),
      py::call_guard<py::gil_scoped_release>());
  o.def(
      "load_tensor", [](const std::string& path) { return onnx::load_tensor(path); },
      py::arg("path"), py::call_guard<py::gil_scoped_release>());
}
#else
void register_onnx(py::module_&) {}  // ember.onnx.load says that the build lacks the frontend
#endif

}  // namespace ember::python
