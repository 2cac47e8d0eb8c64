// Python values as ember's: scalars, a tensor's single element, index keys.
#include <string>

#include "bindings.h"

namespace ember::python {

std::optional<Scalar> as_scalar(py::handle h) {
  // bool before int: Python's bool is an int.
  if (py::isinstance<py::bool_>(h)) return Scalar(h.cast<bool>());
  if (py::isinstance<py::int_>(h)) return Scalar(h.cast<long long>());
  if (py::isinstance<py::float_>(h)) return Scalar(h.cast<double>());
  // A NumPy scalar (numpy.float32(2), numpy.int64(3), numpy.bool_): its Python value.
  if (py::hasattr(h, "dtype") && py::hasattr(h, "item") && !py::isinstance<py::array>(h) &&
      py::hasattr(h, "ndim") && h.attr("ndim").cast<int>() == 0)
    return as_scalar(h.attr("item")());
  return std::nullopt;
}

void realize_without_gil(const Tensor& t) {
  py::gil_scoped_release released;
  t.realize();
}

py::object item(const Tensor& t) {
  realize_without_gil(t);  // then item<T>() reads the realized value
  const ScalarType d = t.dtype();
  if (d == kBool) return py::bool_(t.item<bool>());
  if (is_floating_point(d)) return py::float_(t.item<double>());
  if (d == kUInt64) return py::int_(t.item<uint64_t>());
  return py::int_(t.item<int64_t>());
}

namespace {

TensorIndex one_index(py::handle h) {
  if (py::isinstance<py::slice>(h)) {
    auto bound = [&](const char* name) -> std::optional<int64_t> {
      py::object v = h.attr(name);
      if (v.is_none()) return std::nullopt;
      return v.cast<int64_t>();
    };
    std::optional<int64_t> step = bound("step");
    return Slice(bound("start"), bound("stop"), step.value_or(1));
  }
  if (py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h)) return h.cast<int64_t>();
  throw py::type_error("ember: only integers, slices (`:`) and `...` are valid indices, not " +
                       std::string(py::str(py::type::handle_of(h).attr("__name__"))));
}

}  // namespace

std::vector<TensorIndex> as_indices(py::handle key, int64_t ndim) {
  std::vector<py::handle> keys;
  if (py::isinstance<py::tuple>(key)) {
    for (py::handle k : key.cast<py::tuple>()) keys.push_back(k);
  } else {
    keys.push_back(key);
  }
  int64_t ellipses = 0;
  for (py::handle k : keys) ellipses += k.is(py::ellipsis());
  if (ellipses > 1)
    throw py::index_error("ember: an index can only have a single ellipsis ('...')");
  const int64_t given = static_cast<int64_t>(keys.size()) - ellipses;
  if (given > ndim)
    throw py::index_error("ember: too many indices for tensor of dimension " +
                          std::to_string(ndim));
  std::vector<TensorIndex> out;
  for (py::handle k : keys) {
    if (k.is(py::ellipsis())) {
      for (int64_t i = 0; i < ndim - given; i++) out.emplace_back(Slice());
    } else {
      out.push_back(one_index(k));
    }
  }
  return out;
}

}  // namespace ember::python
