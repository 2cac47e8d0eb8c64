// DLPack both ways, on the CPU, without copies. The structs are dlpack/dlpack.h's (Debian's
// libdlpack-dev, DLPack 0.6); the Python protocol is the array API standard's: a producer's
// __dlpack__() returns a PyCapsule named "dltensor" holding a DLManagedTensor*; the consumer
// renames it "used_dltensor" and from then on owns the DLManagedTensor, calling its deleter when
// done; a capsule nobody consumed calls the deleter when it is collected.
#include <dlpack/dlpack.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"

namespace ember::python {

namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";
// kDLBool: DLPack 0.8's code for bool (one byte per element); Debian's 0.6 header predates it.
constexpr uint8_t kDLBoolCode = 6;

DLDataType dl_dtype(ScalarType t) {
  const auto bits = static_cast<uint8_t>(8 * element_size(t));
  if (t == kBool) return {kDLBoolCode, 8, 1};
  if (t == kBFloat16) return {kDLBfloat, 16, 1};
  if (is_floating_point(t)) return {kDLFloat, bits, 1};
  if (t == kUInt8 || t == kUInt16 || t == kUInt32 || t == kUInt64) return {kDLUInt, bits, 1};
  return {kDLInt, bits, 1};
}

ScalarType ember_dtype(DLDataType d) {
  if (d.lanes == 1) {
    const int code = d.code;
    if (code == kDLBoolCode && d.bits == 8) return kBool;
    if (code == kDLBfloat && d.bits == 16) return kBFloat16;
    for (ScalarType t : {kUInt8, kInt8, kInt16, kInt32, kInt64, kUInt16, kUInt32, kUInt64, kFloat16,
                         kFloat32, kFloat64}) {
      const DLDataType e = dl_dtype(t);
      if (e.code == code && e.bits == d.bits) return t;
    }
  }
  throw py::type_error("from_dlpack: ember has no dtype for DLPack type code " +
                       std::to_string(d.code) + ", " + std::to_string(d.bits) + " bits, " +
                       std::to_string(d.lanes) + " lanes");
}

// What a DLManagedTensor of ember's points at: the memory it exports (held alive) and the arrays
// the DLTensor's shape and strides point into.
struct Exported {
  std::shared_ptr<void> owner;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
};

void delete_exported(DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); }

// A capsule collected unconsumed releases its tensor (the producer's duty in the protocol).
void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;  // consumed: the consumer owns it
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);  // a destructor must not disturb a pending error
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (m && m->deleter) m->deleter(m);
  PyErr_Restore(type, value, traceback);
}

py::capsule to_dlpack(Tensor& t) {
  if (t.requires_grad())
    throw py::value_error("__dlpack__: the tensor requires grad; use tensor.detach()");
  const SharedData data = exported_data(t);
  auto e = std::make_unique<Exported>();
  e->owner = data.owner;
  e->shape.assign(t.sizes().begin(), t.sizes().end());
  e->strides.resize(e->shape.size());
  int64_t stride = 1;  // row-major, in elements
  for (size_t i = e->shape.size(); i-- > 0;) {
    e->strides[i] = stride;
    stride *= e->shape[i];
  }
  DLTensor& d = e->managed.dl_tensor;
  d.data = data.data;
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int>(e->shape.size());
  d.dtype = dl_dtype(t.dtype());
  d.shape = e->shape.data();
  d.strides = e->strides.data();
  d.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = &delete_exported;
  DLManagedTensor* m = &e->managed;
  PyObject* capsule = PyCapsule_New(m, kCapsuleName, &capsule_destructor);
  if (!capsule) throw py::error_already_set();
  e.release();  // the capsule (or its consumer) owns it now
  return py::reinterpret_steal<py::capsule>(capsule);
}

// The strides in elements: the DLTensor's, or row-major's where it has none (DLPack: null
// strides mean compact row-major).
std::vector<int64_t> strides_of(const DLTensor& d) {
  if (d.strides) return {d.strides, d.strides + d.ndim};
  std::vector<int64_t> s(static_cast<size_t>(d.ndim));
  int64_t stride = 1;
  for (int i = d.ndim; i-- > 0;) {
    s[i] = stride;
    stride *= d.shape[i];
  }
  return s;
}

bool row_major(const IntList& shape, const std::vector<int64_t>& strides) {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

// The elements at base with these strides (in elements, any sign), copied in row-major order;
// memcpy reads any alignment.
Tensor strided_copy(const char* base, const std::vector<int64_t>& strides, ScalarType t,
                    const IntList& shape, int64_t numel) {
  const auto es = static_cast<int64_t>(element_size(t));
  std::vector<unsigned char> out(static_cast<size_t>(numel * es));
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t n = 0; n < numel; n++) {
    int64_t offset = 0;
    for (size_t i = 0; i < shape.size(); i++) offset += idx[i] * strides[i];
    std::memcpy(out.data() + n * es, base + offset * es, static_cast<size_t>(es));
    for (size_t i = shape.size(); i-- > 0;) {  // the next index, last dim fastest
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  return from_blob(static_cast<const void*>(out.data()), shape, t);
}

Tensor from_dlpack_capsule(py::capsule capsule) {
  PyObject* c = capsule.ptr();
  if (!PyCapsule_IsValid(c, kCapsuleName))
    throw py::value_error(
        "from_dlpack: not a DLPack capsule, or one already consumed (a capsule is read once)");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kCapsuleName));
  const DLTensor& d = m->dl_tensor;
  // Checked before the capsule is consumed: on error, the producer's capsule still owns it.
  if (d.device.device_type != kDLCPU)
    throw py::value_error("from_dlpack: the tensor is on DLPack device type " +
                          std::to_string(d.device.device_type) + "; ember reads CPU memory only");
  if (d.ndim < 0) throw py::value_error("from_dlpack: negative ndim");
  const ScalarType t = ember_dtype(d.dtype);
  const IntList shape(d.shape, d.shape + d.ndim);
  const std::vector<int64_t> strides = strides_of(d);
  if (PyCapsule_SetName(c, kUsedCapsuleName) != 0) throw py::error_already_set();
  // Ours from here on: the producer's deleter runs once, holding the GIL (it may drop Python
  // references), when the last tensor over the memory dies, or at the end of this call when the
  // elements are copied.
  std::shared_ptr<DLManagedTensor> owner(m, [](DLManagedTensor* p) {
    if (p->deleter) release_with_gil([p] { p->deleter(p); })(p);
  });
  char* base = static_cast<char*>(d.data) + d.byte_offset;
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  if (numel == 0) return zeros(shape, TensorOptions(t));
  const bool aligned = reinterpret_cast<uintptr_t>(base) % element_size(t) == 0;
  if (!aligned || !row_major(shape, strides)) return strided_copy(base, strides, t, shape, numel);
  return from_blob(base, shape, t, [owner](void*) mutable { owner.reset(); });
}

}  // namespace

void register_dlpack(py::module_& m, py::class_<Tensor>& tensor) {
  tensor
      .def(
          "__dlpack__",
          [](Tensor& t, py::object stream, py::object max_version, py::object dl_device,
             py::object copy) {
            // CPU memory: no stream to order against (the array API asks for None).
            if (!stream.is_none() &&
                !(py::isinstance<py::int_>(stream) && stream.cast<int64_t>() == -1))
              throw py::value_error("__dlpack__: stream must be None for a cpu tensor");
            (void)max_version;  // the unversioned capsule is what ember makes (DLPack 0.6)
            if (!dl_device.is_none() &&
                dl_device.cast<std::pair<int, int>>() != std::pair<int, int>(kDLCPU, 0))
              throw py::value_error("__dlpack__: ember exports to the cpu device (1, 0) only");
            if (copy.is_none() || !copy.cast<bool>()) return to_dlpack(t);  // t's own buffer
            Tensor copied = t.detach().clone();
            return to_dlpack(copied);
          },
          py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", [](const Tensor&) { return py::make_tuple(int(kDLCPU), 0); });
  m.def("_from_dlpack_capsule", &from_dlpack_capsule, py::arg("capsule"));
}

}  // namespace ember::python
