// The pieces of the extension module ember._ember, one file each: errors (ember's exceptions as
// Python's), Python values (scalars, dtypes, indices), the NumPy bridge and the Tensor class.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <functional>
#include <optional>
#include <vector>

#include "ember/host_values.h"
#include "ember/tensor.h"

namespace ember::python {

namespace py = pybind11;

/// ember's errors as Python's: ShapeError, DTypeError, ValueError (and an env's InvalidActionError
/// and InvalidOptionError) -> ValueError; IndexError ->
/// IndexError; IOError -> OSError; any other ember::Error -> RuntimeError. The message is ember's.
void register_errors();

/// Realizes t with the GIL released, so that other Python threads run while ember computes
/// (ember's realizes may run on several threads at once). Every binding that waits for kernels
/// (item, numpy, tolist, repr, realize, in-place operators, backward, optimizer steps, save and
/// load) goes through here or releases the GIL itself.
void realize_without_gil(const Tensor& t);

/// A Python bool, int or float (or a NumPy scalar of one) as an ember Scalar; nullopt for
/// anything else. A Python int outside int64 raises OverflowError.
std::optional<Scalar> as_scalar(py::handle h);
/// The single element of a one-element tensor as a Python bool, int or float (by its dtype).
py::object item(const Tensor& t);
/// A Python index (int, slice, Ellipsis or a tuple of them) as Tensor::index's entries for a
/// tensor of `ndim` dims. Raises TypeError for other keys (None, tensors: not supported yet) and
/// IndexError for more than one Ellipsis or more indices than dims.
std::vector<TensorIndex> as_indices(py::handle key, int64_t ndim);

/// The NumPy dtype of t's elements; ValueError for bfloat16 (NumPy has none).
py::dtype numpy_dtype(ScalarType t);
/// The ember dtype of a NumPy dtype; TypeError for one ember has no match for.
ScalarType ember_dtype(const py::dtype& d);
/// A NumPy array over the memory exported_data(t) names (no copy): the array holds that memory
/// alive while it lives.
py::array to_numpy(Tensor& t);
/// A tensor holding a copy of a C-contiguous, native-byte-order array's elements (the Python
/// side, ember/__init__.py, makes such an array); ValueError for any other array.
Tensor from_numpy_copy(const py::array& a);
/// A tensor over a C-contiguous, aligned, writeable, native-byte-order, non-empty array's memory
/// (no copy): the tensor holds a reference to the array until its buffer dies. ValueError for
/// any other array (ember/__init__.py copies those).
Tensor from_numpy_shared(const py::array& a);
/// The memory numpy() and __dlpack__ export for t: the buffer t reads when t is realized or is a
/// detach() of a realized tensor (shared: writes through it are seen by t, and t's in-place
/// updates by it, as with torch); otherwise t is first made a buffer of its own (a lazy tensor
/// realized, a view rebound to a realized copy of its values), which is then shared.
SharedData exported_data(Tensor& t);
/// A from_blob deleter that runs `release` (which touches Python objects) holding the GIL, from
/// whichever thread drops the last tensor; nothing once the interpreter is finalized.
std::function<void(void*)> release_with_gil(std::function<void()> release);

/// DLPack (the tensor exchange ABI of dlpack/dlpack.h): Tensor.__dlpack__ /
/// __dlpack_device__ and _from_dlpack_capsule.
void register_dlpack(py::module_& m, py::class_<Tensor>& tensor);
/// ember._ember._nn (initialisers, functional ops, losses, Linear's parameters), ._optim (SGD,
/// Adam, AdamW) and ._io (safetensors files).
void register_nn(py::module_& m);
void register_optim(py::module_& m);
void register_io(py::module_& m);
/// ember._ember._envs (LunarLander), ._ppo (the PPO trainer), ._jit (capture and replay) and
/// ._onnx (the ONNX frontend, where the build has it).
void register_envs(py::module_& m);
void register_ppo(py::module_& m);
void register_jit(py::module_& m);
void register_onnx(py::module_& m);

py::class_<Tensor> register_tensor(py::module_& m);

}  // namespace ember::python
