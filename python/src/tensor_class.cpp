// ember.Tensor: the C++ Tensor with PyTorch's Python names (operators, shape, dtype, autograd,
// item, tolist, numpy, indexing). Every method runs ember's op; laziness is unchanged (data is
// read, and the graph realized, only by item, tolist, numpy, repr and bool/int/float).
#include <pybind11/stl.h>

#include <string>

#include "bindings.h"

namespace ember::python {

namespace {

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

// `a op b` for a Tensor or a Python number b; NotImplemented for anything else (Python then
// tries the other operand's method, and raises TypeError when that fails too).
template <typename F>
py::object binary(const Tensor& a, py::handle b, F f) {
  if (py::isinstance<Tensor>(b)) return py::cast(f(a, b.cast<const Tensor&>()));
  if (auto s = as_scalar(b)) return py::cast(f(a, *s));
  return not_implemented();
}

// The reflected form, `b op a` for a Python number b (Tensor op Tensor never gets here).
template <typename F>
py::object reflected(const Tensor& a, py::handle b, F f) {
  if (auto s = as_scalar(b)) return py::cast(f(*s, a));
  return not_implemented();
}

py::tuple shape_of(const Tensor& t) {
  py::tuple out(t.dim());
  for (int64_t i = 0; i < t.dim(); i++) out[i] = py::int_(t.size(i));
  return out;
}

// A size given as ints, or as one tuple or list of ints (PyTorch's reshape(2, 3) and
// reshape((2, 3))).
IntList as_shape(const py::args& args) {
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) return args[0].cast<IntList>();
  return args.cast<IntList>();
}

// A dim given as an int or as a tuple or list of ints (PyTorch's sum(0) and sum((0, 1))).
IntList as_dims(py::handle dim) {
  if (py::isinstance<py::int_>(dim)) return {dim.cast<int64_t>()};
  return dim.cast<IntList>();
}

void define_operators(py::class_<Tensor>& c) {
  c.def("__add__",
        [](const Tensor& a, py::handle b) {
          return binary(a, b, [](const Tensor& x, const auto& y) { return x + y; });
        })
      .def("__radd__",
           [](const Tensor& a, py::handle b) {
             return reflected(a, b, [](const Scalar& x, const Tensor& y) { return x + y; });
           })
      .def("__sub__",
           [](const Tensor& a, py::handle b) {
             return binary(a, b, [](const Tensor& x, const auto& y) { return x - y; });
           })
      .def("__rsub__",
           [](const Tensor& a, py::handle b) {
             return reflected(a, b, [](const Scalar& x, const Tensor& y) { return x - y; });
           })
      .def("__mul__",
           [](const Tensor& a, py::handle b) {
             return binary(a, b, [](const Tensor& x, const auto& y) { return x * y; });
           })
      .def("__rmul__",
           [](const Tensor& a, py::handle b) {
             return reflected(a, b, [](const Scalar& x, const Tensor& y) { return x * y; });
           })
      .def("__truediv__",
           [](const Tensor& a, py::handle b) {
             return binary(a, b, [](const Tensor& x, const auto& y) { return x / y; });
           })
      .def("__rtruediv__",
           [](const Tensor& a, py::handle b) {
             return reflected(a, b, [](const Scalar& x, const Tensor& y) { return x / y; });
           })
      .def("__pow__",
           [](const Tensor& a, py::handle b) {
             return binary(a, b, [](const Tensor& x, const auto& y) { return x.pow(y); });
           })
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return a.matmul(b); })
      .def("__and__", [](const Tensor& a, const Tensor& b) { return a & b; })
      .def("__or__", [](const Tensor& a, const Tensor& b) { return a | b; })
      .def("__xor__", [](const Tensor& a, const Tensor& b) { return a ^ b; })
      .def("__invert__", [](const Tensor& a) { return ~a; })
      .def("__neg__", [](const Tensor& a) { return -a; })
      .def("__lt__",
           [](const Tensor& a, py::handle b) {
             return binary(a, b, [](const Tensor& x, const auto& y) { return x < y; });
           })
      .def("__le__",
           [](const Tensor& a, py::handle b) {
             return binary(a, b, [](const Tensor& x, const auto& y) { return x <= y; });
           })
      .def("__gt__",
           [](const Tensor& a, py::handle b) {
             return binary(a, b, [](const Tensor& x, const auto& y) { return x > y; });
           })
      .def("__ge__",
           [](const Tensor& a, py::handle b) {
             return binary(a, b, [](const Tensor& x, const auto& y) { return x >= y; });
           })
      .def("__eq__",
           [](const Tensor& a, py::handle b) {
             return binary(a, b, [](const Tensor& x, const auto& y) { return x == y; });
           })
      .def("__ne__",
           [](const Tensor& a, py::handle b) {
             return binary(a, b, [](const Tensor& x, const auto& y) { return x != y; });
           })
      // __eq__ returns a tensor, so hashing is by identity (as torch.Tensor's).
      .def("__hash__", [](py::handle self) {
        return py::hash(py::int_(reinterpret_cast<uintptr_t>(self.ptr())));
      });
}

// `a op= b` in place, as torch's: a keeps its buffer, so NumPy arrays over it (numpy()) see the
// result, which is realized at once for that reason.
template <typename F>
py::object in_place(py::object self, py::handle b, F f) {
  Tensor& a = self.cast<Tensor&>();
  if (py::isinstance<Tensor>(b)) {
    f(a, b.cast<const Tensor&>());
  } else if (auto s = as_scalar(b)) {
    f(a, *s);
  } else {
    return not_implemented();
  }
  realize_without_gil(a);
  return self;
}

void define_in_place(py::class_<Tensor>& c) {
  c.def("__iadd__",
        [](py::object a, py::handle b) {
          return in_place(a, b, [](Tensor& x, const auto& y) { x.add_(y); });
        })
      .def("__isub__",
           [](py::object a, py::handle b) {
             return in_place(a, b, [](Tensor& x, const auto& y) { x.sub_(y); });
           })
      .def("__imul__",
           [](py::object a, py::handle b) {
             return in_place(a, b, [](Tensor& x, const auto& y) { x.mul_(y); });
           })
      .def("__itruediv__", [](py::object a, py::handle b) {
        return in_place(a, b, [](Tensor& x, const auto& y) { x.div_(y); });
      });
}

void define_autograd(py::class_<Tensor>& c) {
  c.def_property(
       "requires_grad", [](const Tensor& t) { return t.requires_grad(); },
       [](Tensor& t, bool r) { t.set_requires_grad(r); })
      .def(
          "requires_grad_", [](Tensor& t, bool r) -> Tensor& { return t.requires_grad_(r); },
          py::arg("requires_grad") = true, py::return_value_policy::reference_internal)
      .def_property(
          "grad",
          [](const Tensor& t) -> py::object {
            Tensor g = t.grad();
            return g.defined() ? py::cast(g) : py::none();
          },
          [](Tensor& t, const std::optional<Tensor>& g) { t.set_grad(g.value_or(Tensor())); })
      .def(
          "backward",
          [](const Tensor& t, std::optional<Tensor> gradient) {
            py::gil_scoped_release released;
            t.backward(gradient.value_or(Tensor()));
          },
          py::arg("gradient") = py::none())
      .def("detach", &Tensor::detach);
}

void define_data(py::class_<Tensor>& c) {
  c.def_property_readonly("shape", &shape_of)
      .def("size", [](const Tensor& t) { return shape_of(t); })
      .def("size", [](const Tensor& t, int64_t dim) { return t.size(dim); })
      .def_property_readonly("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def_property_readonly("dtype", &Tensor::dtype)
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.size(0);
           })
      .def("item", &item)
      .def("__float__",
           [](const Tensor& t) {
             realize_without_gil(t);
             return t.item<double>();
           })
      .def("__int__",
           [](const Tensor& t) {
             realize_without_gil(t);
             return t.item<int64_t>();
           })
      .def("__bool__",
           [](const Tensor& t) {
             realize_without_gil(t);
             return t.item<bool>();
           })
      .def("numpy",
           [](Tensor& t) {
             if (t.requires_grad())
               throw py::value_error(
                   "numpy(): the tensor requires grad; use tensor.detach().numpy()");
             return to_numpy(t);
           })
      .def(
          "__array__",
          [](const Tensor& t, py::object dtype) {
            Tensor d = t.detach();
            py::array a = to_numpy(d);
            return dtype.is_none() ? a : py::array(a.attr("astype")(dtype));
          },
          py::arg("dtype") = py::none())
      .def("tolist",
           [](const Tensor& t) {
             Tensor v = t.dtype() == kBFloat16 ? t.detach().to(kFloat32) : t.detach();
             return to_numpy(v).attr("tolist")();
           })
      .def("realize",
           [](const Tensor& t) {
             realize_without_gil(t);
             return t;
           })
      // The address of a realized tensor's buffer (torch's data_ptr); ValueError for a lazy
      // tensor or a view (realize() or numpy() gives it a buffer).
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("__getitem__",
           [](const Tensor& t, py::handle key) { return t.index(as_indices(key, t.dim())); })
      .def("__repr__", [](const Tensor& t) {
        realize_without_gil(t);
        return t.toString();
      });
}

void define_methods(py::class_<Tensor>& c) {
  c.def("to", [](const Tensor& t, ScalarType d) { return t.to(d); })
      .def("float", [](const Tensor& t) { return t.to(kFloat32); })
      .def("double", [](const Tensor& t) { return t.to(kFloat64); })
      .def("long", [](const Tensor& t) { return t.to(kInt64); })
      .def("contiguous", &Tensor::contiguous)
      .def(
          "copy_",
          [](py::object self, const Tensor& src) {  // realized at once, as the operators
            Tensor& t = self.cast<Tensor&>();
            t.copy_(src);
            realize_without_gil(t);
            return self;
          },
          py::arg("src"))
      .def("clone", &Tensor::clone)
      .def("reshape", [](const Tensor& t, py::args s) { return t.reshape(as_shape(s)); })
      .def("view", [](const Tensor& t, py::args s) { return t.reshape(as_shape(s)); })
      .def("permute", [](const Tensor& t, py::args s) { return t.permute(as_shape(s)); })
      .def("transpose", &Tensor::transpose)
      .def("t", &Tensor::t)
      .def("matmul", &Tensor::matmul)
      .def(
          "sum",
          [](const Tensor& t, py::object dim, bool keepdim) {
            return dim.is_none() ? t.sum() : t.sum(as_dims(dim), keepdim);
          },
          py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def(
          "mean",
          [](const Tensor& t, py::object dim, bool keepdim) {
            return dim.is_none() ? t.mean() : t.mean(as_dims(dim), keepdim);
          },
          py::arg("dim") = py::none(), py::arg("keepdim") = false)
      .def("exp", &Tensor::exp)
      .def("log", &Tensor::log)
      .def("sqrt", &Tensor::sqrt)
      .def("tanh", &Tensor::tanh)
      .def("sigmoid", &Tensor::sigmoid)
      .def("relu", &Tensor::relu)
      .def("abs", &Tensor::abs);
}

}  // namespace

py::class_<Tensor> register_tensor(py::module_& m) {
  py::class_<Tensor> c(m, "Tensor");
  define_operators(c);
  define_in_place(c);
  define_autograd(c);
  define_data(c);
  define_methods(c);
  return c;
}

}  // namespace ember::python
