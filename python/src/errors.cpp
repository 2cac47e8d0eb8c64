// ember's typed exceptions (ember/error.h) become Python's built-in ones, so that Python code
// catches them as it catches NumPy's and PyTorch's; nothing reaches std::terminate.
#include <exception>

#include "bindings.h"
#include "ember/error.h"
#include "ember/rl/env.h"

namespace ember::python {
namespace {

// The Python type of an ember error: shapes, dtypes and values (an env's bad action or option
// too) are ValueError (as NumPy, PyTorch and Gymnasium raise), a file is OSError, the rest
// RuntimeError.
PyObject* python_type(const Error& e) {
  if (dynamic_cast<const ShapeError*>(&e) || dynamic_cast<const DTypeError*>(&e) ||
      dynamic_cast<const ValueError*>(&e) || dynamic_cast<const rl::InvalidActionError*>(&e) ||
      dynamic_cast<const rl::InvalidOptionError*>(&e))
    return PyExc_ValueError;
  if (dynamic_cast<const IndexError*>(&e)) return PyExc_IndexError;
  if (dynamic_cast<const IOError*>(&e)) return PyExc_OSError;
  return PyExc_RuntimeError;
}

}  // namespace

void register_errors() {
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(python_type(e), e.what());
    }
  });
}

}  // namespace ember::python
