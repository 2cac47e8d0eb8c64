// ember._ember._io: safetensors files (ember/io/safetensors.h) for ember.save / ember.load and
// Module.load_state_dict. Reading and writing run without the GIL.
#include <pybind11/stl.h>

#include <string>

#include "bindings.h"
#include "ember/io/safetensors.h"

namespace ember::python {

void register_io(py::module_& m) {
  py::module_ io = m.def_submodule("_io", "ember.save / ember.load's C++ parts");
  io.def(
      "save_file",
      [](const NamedTensors& tensors, const std::string& path, const Metadata& metadata) {
        ember::save(tensors, path, metadata);
      },
      py::arg("tensors"), py::arg("path"), py::arg("metadata") = Metadata(),
      py::call_guard<py::gil_scoped_release>());
  // ([(name, tensor)] in file order, metadata)
  io.def(
      "load_file",
      [](const std::string& path) {
        TensorFile f = [&] {
          py::gil_scoped_release released;
          return ember::load_file(path);
        }();
        return py::make_tuple(f.tensors, f.metadata);
      },
      py::arg("path"));
  io.def(
      "load_into",
      [](const NamedTensors& targets, const std::string& path) {
        return ember::load_into(targets, path);
      },
      py::arg("targets"), py::arg("path"), py::call_guard<py::gil_scoped_release>());
}

}  // namespace ember::python
