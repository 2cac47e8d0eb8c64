// Tensors to NumPy arrays and back. Tensor -> array shares the realized buffer (no copy) and the
// array's base object holds that memory; array -> tensor shares the array's memory
// (from_blob with a deleter that drops a reference to the array) where ember can use it as it
// is, and copies otherwise (ember/__init__.py decides).
#include <string>

#include "bindings.h"
#include "ember/host_values.h"

namespace ember::python {

py::dtype numpy_dtype(ScalarType t) {
  if (t == kBFloat16)
    throw ValueError(
        "numpy(): bfloat16 has no NumPy dtype; convert first, e.g. t.to(ember.float32)");
  return py::dtype::from_args(py::str(dtype_name(t)));  // ember's names are NumPy's
}

ScalarType ember_dtype(const py::dtype& d) {
  const char kind = d.kind();
  const auto size = d.itemsize();
  if (kind == 'b' && size == 1) return kBool;
  if (kind == 'i') {
    if (size == 1) return kInt8;
    if (size == 2) return kInt16;
    if (size == 4) return kInt32;
    if (size == 8) return kInt64;
  }
  if (kind == 'u') {
    if (size == 1) return kUInt8;
    if (size == 2) return kUInt16;
    if (size == 4) return kUInt32;
    if (size == 8) return kUInt64;
  }
  if (kind == 'f') {
    if (size == 2) return kFloat16;
    if (size == 4) return kFloat32;
    if (size == 8) return kFloat64;
  }
  throw py::type_error("ember: can't convert a NumPy array of dtype " +
                       d.attr("name").cast<std::string>() +
                       "; the supported dtypes are bool, int8-64, uint8-64, float16, float32 "
                       "and float64");
}

SharedData exported_data(Tensor& t) {
  {
    py::gil_scoped_release released;  // shared_data() waits for kernels held back
    if (SharedData d = shared_data(t); d.data) return d;
  }
  realize_without_gil(t);
  // Another view of a buffer (a reshape, a slice) becomes a buffer of its own with the same
  // values (ember's views never alias writes, so nothing else can tell).
  if (!t.is_realized()) {
    Tensor own = [&] {
      py::gil_scoped_release released;
      return realized_clone(t);
    }();
    t = own;
  }
  SharedData d = shared_data(t);
  if (!d.data) throw Error("the tensor did not realize into a buffer");
  return d;
}

std::function<void(void*)> release_with_gil(std::function<void()> release) {
  return [release = std::move(release)](void*) {
    if (!Py_IsInitialized()) return;  // at exit: the objects are gone with the interpreter
    const PyGILState_STATE s = PyGILState_Ensure();
    release();
    PyGILState_Release(s);
  };
}

py::array to_numpy(Tensor& t) {
  const py::dtype dt = numpy_dtype(t.dtype());
  const SharedData data = exported_data(t);
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = static_cast<py::ssize_t>(element_size(t.dtype()));
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  // The capsule holds the memory: it outlives every array over it, whatever becomes of t.
  py::capsule owner(new std::shared_ptr<void>(data.owner),
                    [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
  return py::array(dt, shape, strides, data.data, owner);
}

Tensor from_numpy_copy(const py::array& a) {
  if (!(a.flags() & py::array::c_style))
    throw ValueError("from_numpy: the array must be C-contiguous here (ember/__init__.py copies)");
  if (!a.dtype().attr("isnative").cast<bool>())
    throw ValueError("from_numpy: the array must be in native byte order");
  const ScalarType t = ember_dtype(a.dtype());
  IntList shape(a.shape(), a.shape() + a.ndim());
  return from_blob(a.data(), shape, t);
}

Tensor from_numpy_shared(const py::array& a) {
  const int f = a.flags();
  if (!(f & py::array::c_style) || !(f & py::detail::npy_api::NPY_ARRAY_ALIGNED_) ||
      !(f & py::detail::npy_api::NPY_ARRAY_WRITEABLE_) ||
      !a.dtype().attr("isnative").cast<bool>() || a.size() == 0)
    throw ValueError(
        "from_numpy: only a C-contiguous, aligned, writeable, native-byte-order, non-empty array "
        "is shared (ember/__init__.py copies the others)");
  const ScalarType t = ember_dtype(a.dtype());
  IntList shape(a.shape(), a.shape() + a.ndim());
  auto* held = new py::object(a);  // released under the GIL when the buffer dies
  return from_blob(const_cast<void*>(a.data()), shape, t,
                   release_with_gil([held] { delete held; }));
}

}  // namespace ember::python
