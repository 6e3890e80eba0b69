// tilec's native kernel call: checks torch tensors against a compiled plan, allocates the
// outputs with torch's allocator and launches, all in one C call from Python.
//
// A Call holds the plan of one kernel specialization on one device, built once by
// python/tilec/runtime/fastcall.py: per input its dtype and dimensions (a size, or a symbol
// bound by the first dimension that has it), per output its dtype and dimensions, the launch
// slots and the grid as small programs over the symbols. A call that matches the plan costs a
// few hundred nanoseconds besides cuLaunchKernel; anything else (another dtype, shape,
// device, a non-contiguous tensor, keywords, a failed allocation) goes to the Python call,
// which checks everything again and raises the error that names the argument.
//
// It links torch (libtorch_python for the tensor objects), so it is built against the torch
// it runs with; tilec works without it (the Python call path).
#include <Python.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <ATen/EmptyTensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/Allocator.h>
#include <c10/core/TensorOptions.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include "cuda_driver.h"
#include "graph_launch.h"

namespace {

constexpr int kMaxParams = 32;   // tensor parameters of a kernel
constexpr int kMaxSymbols = 16;  // distinct shape symbols
constexpr int kMaxDims = 8;      // dimensions of one tensor
constexpr int kMaxSlots = 64;    // kernel arguments
static_assert(kMaxSlots <= tilec_cuda::GraphLaunch::kMaxArguments, "a launch takes every slot");

// Grid program operations (fastcall.py emits them in postfix order).
enum GridOp : int64_t { kConst = 0, kSymbol = 1, kAdd = 2, kSub = 3, kMul = 4, kFloorDiv = 5,
                        kMod = 6, kNeg = 7 };
// Launch slot kinds: a tensor's data pointer, a constant int64, a symbol's value as int64.
enum SlotKind : int64_t { kPointer = 0, kConstant = 1, kSymbolValue = 2 };

struct TensorPlan {
  int position = 0;             // among the kernel's parameters
  c10::ScalarType dtype = c10::ScalarType::Float;
  int ndim = 0;
  int64_t dims[kMaxDims] = {};  // >= 0: that size; < 0: symbol -1 - dim
  bool returned = true;         // outputs: returned to the caller (workspaces are not)
};

struct Slot {
  int64_t kind = kPointer;
  int64_t value = 0;  // parameter position, constant, or symbol
};

struct Call {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  std::vector<TensorPlan> *inputs;
  std::vector<TensorPlan> *outputs;
  std::vector<Slot> *slots;
  std::vector<int64_t> *grid[3];
  int params;
  int symbols;
  c10::DeviceType device_type;
  c10::DeviceIndex device_index;
  c10::DispatchKeySet keys;  // of the outputs torch allocates
  c10::Allocator *allocator;  // the device type's (torch's caching allocator), or null: at::empty
  tilec_cuda::CUfunction function;  // null: `launch` runs the kernel (a CPU artifact)
  tilec_cuda::GraphLaunch *graph;   // how `function` is launched (null for a CPU artifact)
  unsigned block[3];
  unsigned shared_bytes;
  PyObject *launch;     // launch(args, symbols) where `function` is null
  PyObject *symbol_names;  // a tuple of str, for `launch`'s symbols dict
  PyObject *stream_of;  // torch._C._cuda_getCurrentRawStream
  const c10::impl::DeviceGuardImplInterface *guard;  // the device type's, null for the CPU
  c10::StreamId stream_id;  // the current stream whose handle raw_stream holds
  void *raw_stream;
  bool stream_known;        // raw_stream holds stream_id's handle
  PyObject *device_object;  // the device index as a Python int
  PyObject *fallback;   // the checked Python call, for every argument list the plan declines
  PyObject *error;      // tilec.errors.LaunchError
  PyObject *name;       // the kernel's name, for messages
  PyObject *keep;       // what owns `function` (the loaded module)
};

PyObject *decline(Call *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

// Python's floor division and modulo; false for a zero divisor.
bool floor_divide(int64_t a, int64_t b, int64_t &out) {
  if (b == 0) return false;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  out = q;
  return true;
}

bool floor_modulo(int64_t a, int64_t b, int64_t &out) {
  if (b == 0) return false;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  out = r;
  return true;
}

// Runs one grid program; false where it cannot (the Python call then says why).
bool evaluate(const std::vector<int64_t> &program, const int64_t *symbols, int64_t &out) {
  int64_t stack[16];
  int depth = 0;
  for (size_t i = 0; i < program.size(); i += 2) {
    int64_t op = program[i], value = program[i + 1];
    if (op == kConst || op == kSymbol) {
      if (depth == 16) return false;
      stack[depth++] = op == kConst ? value : symbols[value];
      continue;
    }
    if (op == kNeg) {
      if (depth < 1) return false;
      stack[depth - 1] = -stack[depth - 1];
      continue;
    }
    if (depth < 2) return false;
    int64_t b = stack[--depth], &a = stack[depth - 1];
    switch (op) {
      case kAdd: a += b; break;
      case kSub: a -= b; break;
      case kMul: a *= b; break;
      case kFloorDiv: if (!floor_divide(a, b, a)) return false; break;
      case kMod: if (!floor_modulo(a, b, a)) return false; break;
      default: return false;
    }
  }
  if (depth != 1) return false;
  out = stack[0];
  return true;
}

// The handle of the device's current stream. A torch stream id names one stream for the life
// of the process (the pool's streams are never destroyed, an external stream's id is its
// handle), so the handle of the last id seen is kept: torch's Python accessor is asked only
// when the current stream changes, not on every launch.
bool current_stream(Call *self, void *&raw) {
  c10::Stream stream = self->guard->getStream(c10::Device(self->device_type, self->device_index));
  if (self->stream_known && stream.id() == self->stream_id) {
    raw = self->raw_stream;
    return true;
  }
  PyObject *handle = PyObject_Vectorcall(self->stream_of, &self->device_object, 1, nullptr);
  if (handle == nullptr) return false;
  raw = PyLong_AsVoidPtr(handle);
  Py_DECREF(handle);
  if (raw == nullptr && PyErr_Occurred()) return false;
  self->stream_id = stream.id();
  self->raw_stream = raw;
  self->stream_known = true;
  return true;
}

PyObject *call_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                          PyObject *kwnames) {
  Call *self = reinterpret_cast<Call *>(callable);
  if (self->fallback == nullptr) {  // cleared by the collector
    PyErr_SetString(PyExc_RuntimeError, "this kernel call was cleared");
    return nullptr;
  }
  Py_ssize_t count = PyVectorcall_NARGS(nargsf);
  const std::vector<TensorPlan> &inputs = *self->inputs;
  const std::vector<TensorPlan> &outputs = *self->outputs;
  if (kwnames != nullptr || count != static_cast<Py_ssize_t>(inputs.size()))
    return decline(self, args, nargsf, kwnames);
  int64_t symbols[kMaxSymbols];
  bool bound[kMaxSymbols] = {};
  void *pointers[kMaxParams] = {};
  for (size_t i = 0; i < inputs.size(); ++i) {
    PyObject *arg = args[i];
    if (!THPVariable_Check(arg)) return decline(self, args, nargsf, kwnames);
    const at::Tensor &tensor = THPVariable_Unpack(arg);
    const TensorPlan &plan = inputs[i];
    if (tensor.scalar_type() != plan.dtype || tensor.dim() != plan.ndim)
      return decline(self, args, nargsf, kwnames);
    c10::Device device = tensor.device();
    if (device.type() != self->device_type ||
        (self->device_type != c10::DeviceType::CPU && device.index() != self->device_index))
      return decline(self, args, nargsf, kwnames);
    c10::IntArrayRef sizes = tensor.sizes();
    for (int d = 0; d < plan.ndim; ++d) {
      int64_t dim = plan.dims[d];
      if (dim >= 0) {
        if (sizes[d] != dim) return decline(self, args, nargsf, kwnames);
      } else if (bound[-1 - dim]) {
        if (symbols[-1 - dim] != sizes[d]) return decline(self, args, nargsf, kwnames);
      } else {
        bound[-1 - dim] = true;
        symbols[-1 - dim] = sizes[d];
      }
    }
    if (!tensor.is_contiguous()) return decline(self, args, nargsf, kwnames);
    pointers[plan.position] = const_cast<void *>(tensor.const_data_ptr());
  }
  int64_t grid[3];
  for (int axis = 0; axis < 3; ++axis) {
    if (!evaluate(*self->grid[axis], symbols, grid[axis]) || grid[axis] < 0 ||
        grid[axis] > 0xffffffffLL)
      return decline(self, args, nargsf, kwnames);
  }
  c10::SmallVector<at::TensorBase, 4> made(outputs.size());  // only the outputs' handles
  try {
    // torch's caching allocator serves the current device: the plan's, or the Python call
    if (self->guard != nullptr && self->guard->getDevice().index() != self->device_index)
      return decline(self, args, nargsf, kwnames);
    for (size_t i = 0; i < outputs.size(); ++i) {
      const TensorPlan &plan = outputs[i];
      int64_t shape[kMaxDims];
      for (int d = 0; d < plan.ndim; ++d)
        shape[d] = plan.dims[d] >= 0 ? plan.dims[d] : symbols[-1 - plan.dims[d]];
      c10::IntArrayRef sizes(shape, plan.ndim);
      made[i] = self->allocator != nullptr
                    ? at::detail::empty_generic(sizes, self->allocator, self->keys, plan.dtype,
                                                std::nullopt)
                    : at::empty(sizes, at::TensorOptions().dtype(plan.dtype).device(
                                           self->device_type, self->device_index));
      pointers[plan.position] = made[i].mutable_data_ptr();
    }
  } catch (const std::exception &) {  // e.g. out of memory: torch's own error, from Python
    return decline(self, args, nargsf, kwnames);
  }
  if (self->function != nullptr) {
    if (grid[0] != 0 && grid[1] != 0 && grid[2] != 0) {
      uint64_t values[kMaxSlots];
      const std::vector<Slot> &layout = *self->slots;
      for (size_t i = 0; i < layout.size(); ++i) {
        const Slot &slot = layout[i];
        if (slot.kind == kPointer)
          values[i] = reinterpret_cast<uint64_t>(pointers[slot.value]);
        else
          values[i] = static_cast<uint64_t>(slot.kind == kConstant ? slot.value
                                                                   : symbols[slot.value]);
      }
      void *raw_stream = nullptr;
      if (!current_stream(self, raw_stream)) return nullptr;
      const unsigned blocks[3] = {static_cast<unsigned>(grid[0]),
                                  static_cast<unsigned>(grid[1]),
                                  static_cast<unsigned>(grid[2])};
      tilec_cuda::CUresult result = self->graph->launch(
          self->function, blocks, self->block, self->shared_bytes, raw_stream, values,
          static_cast<int>(layout.size()));
      if (result != 0) {
        const char *message = "unknown error";
        tilec_cuda::driver().cuGetErrorString(result, &message);
        PyErr_Format(self->error, "launching '%U' failed: cuLaunchKernel: %s (CUresult %d)",
                     self->name, message, result);
        return nullptr;
      }
    }
  } else {
    PyObject *all = PyList_New(self->params);
    if (all == nullptr) return nullptr;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Py_INCREF(args[i]);
      PyList_SET_ITEM(all, inputs[i].position, args[i]);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      PyObject *wrapped = THPVariable_Wrap(made[i]);
      if (wrapped == nullptr) {
        Py_DECREF(all);
        return nullptr;
      }
      PyList_SET_ITEM(all, outputs[i].position, wrapped);
    }
    PyObject *named = PyDict_New();
    for (int k = 0; named != nullptr && k < self->symbols; ++k) {
      PyObject *value = PyLong_FromLongLong(symbols[k]);
      if (value == nullptr ||
          PyDict_SetItem(named, PyTuple_GET_ITEM(self->symbol_names, k), value) < 0) {
        Py_XDECREF(value);
        Py_CLEAR(named);
        break;
      }
      Py_DECREF(value);
    }
    PyObject *done = named == nullptr ? nullptr : PyObject_CallFunctionObjArgs(
        self->launch, all, named, nullptr);
    Py_XDECREF(named);
    if (done == nullptr) {
      Py_DECREF(all);
      return nullptr;
    }
    Py_DECREF(done);
    int returned = 0;
    PyObject *single = Py_None;
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].returned) {
        ++returned;
        single = PyList_GET_ITEM(all, outputs[i].position);
      }
    PyObject *result;
    if (returned <= 1) {
      result = single;
      Py_INCREF(result);
    } else {
      result = PyTuple_New(returned);
      int n = 0;
      for (size_t i = 0; result != nullptr && i < outputs.size(); ++i)
        if (outputs[i].returned) {
          PyObject *item = PyList_GET_ITEM(all, outputs[i].position);
          Py_INCREF(item);
          PyTuple_SET_ITEM(result, n++, item);
        }
    }
    Py_DECREF(all);
    return result;
  }
  int returned = 0;
  size_t last = 0;
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].returned) {
      ++returned;
      last = i;
    }
  if (returned == 0) Py_RETURN_NONE;
  if (returned == 1) return THPVariable_Wrap(std::move(made[last]));
  PyObject *result = PyTuple_New(returned);
  if (result == nullptr) return nullptr;
  int n = 0;
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].returned) {
      PyObject *item = THPVariable_Wrap(std::move(made[i]));
      if (item == nullptr) {
        Py_DECREF(result);
        return nullptr;
      }
      PyTuple_SET_ITEM(result, n++, item);
    }
  return result;
}

// ---- construction ------------------------------------------------------------------------

// A postfix program over known symbols that leaves one value.
bool program_wellformed(const std::vector<int64_t> &program, int symbols) {
  if (program.empty() || program.size() % 2 != 0) return false;
  int depth = 0;
  for (size_t i = 0; i < program.size(); i += 2) {
    int64_t op = program[i], value = program[i + 1];
    if (op == kConst) {
      ++depth;
    } else if (op == kSymbol) {
      if (value < 0 || value >= symbols) return false;
      ++depth;
    } else if (op == kNeg) {
      if (depth < 1) return false;
    } else if (op >= kAdd && op <= kMod) {
      if (depth < 2) return false;
      --depth;
    } else {
      return false;
    }
    if (depth > 16) return false;
  }
  return depth == 1;
}

bool read_int64s(PyObject *sequence, std::vector<int64_t> &out, const char *what) {
  PyObject *fast = PySequence_Fast(sequence, what);
  if (fast == nullptr) return false;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
  for (Py_ssize_t i = 0; i < count; ++i) {
    long long value = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
    if (value == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
    out.push_back(value);
  }
  Py_DECREF(fast);
  return true;
}

// (position, torch dtype, dims, returned) per tensor.
bool read_tensors(PyObject *sequence, std::vector<TensorPlan> &out, int params, int symbols) {
  PyObject *fast = PySequence_Fast(sequence, "tensor plans must be a sequence");
  if (fast == nullptr) return false;
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(fast); ++i) {
    int position = 0;
    PyObject *dtype, *dims;
    int returned = 1;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "iOO|p", &position, &dtype, &dims,
                          &returned)) {
      ok = false;
      break;
    }
    TensorPlan plan;
    plan.position = position;
    ok = false;
    if (!THPDtype_Check(dtype)) {
      PyErr_SetString(PyExc_TypeError, "a tensor plan's dtype must be a torch.dtype");
      break;
    }
    plan.dtype = reinterpret_cast<THPDtype *>(dtype)->scalar_type;
    std::vector<int64_t> values;
    if (!read_int64s(dims, values, "dims must be a sequence")) break;
    if (values.size() > kMaxDims || plan.position < 0 || plan.position >= params) {
      PyErr_SetString(PyExc_ValueError, "a tensor plan exceeds the native call's limits");
      break;
    }
    plan.ndim = static_cast<int>(values.size());
    for (int d = 0; d < plan.ndim; ++d) {
      if (values[d] < -symbols) {
        PyErr_SetString(PyExc_ValueError, "a dimension names an unknown symbol");
        break;
      }
      plan.dims[d] = values[d];
    }
    if (PyErr_Occurred()) break;
    plan.returned = returned != 0;
    out.push_back(plan);
    ok = true;
  }
  Py_DECREF(fast);
  return ok;
}

// The Python objects a Call holds: the kernel object's bound fallback holds the kernel, which
// holds its Call, so the collector must see them to free an unused kernel.
int call_traverse(PyObject *object, visitproc visit, void *arg) {
  Call *self = reinterpret_cast<Call *>(object);
  Py_VISIT(self->launch);
  Py_VISIT(self->symbol_names);
  Py_VISIT(self->stream_of);
  Py_VISIT(self->device_object);
  Py_VISIT(self->fallback);
  Py_VISIT(self->error);
  Py_VISIT(self->name);
  Py_VISIT(self->keep);
  return 0;
}

int call_clear(PyObject *object) {
  Call *self = reinterpret_cast<Call *>(object);
  Py_CLEAR(self->launch);
  Py_CLEAR(self->symbol_names);
  Py_CLEAR(self->stream_of);
  Py_CLEAR(self->device_object);
  Py_CLEAR(self->fallback);
  Py_CLEAR(self->error);
  Py_CLEAR(self->name);
  Py_CLEAR(self->keep);
  return 0;
}

void call_dealloc(PyObject *object) {
  Call *self = reinterpret_cast<Call *>(object);
  PyObject_GC_UnTrack(object);
  call_clear(object);
  delete self->inputs;
  delete self->outputs;
  delete self->slots;
  for (auto *program : self->grid) delete program;
  delete self->graph;
  Py_TYPE(object)->tp_free(object);
}

PyObject *call_new(PyTypeObject *type, PyObject *args, PyObject *kwargs);

PyTypeObject CallType = {
    PyVarObject_HEAD_INIT(nullptr, 0)
};

PyObject *call_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *keywords[] = {"params", "inputs", "outputs", "symbols", "slots", "grid",
                                   "device_type", "device_index", "fallback", "error", "name",
                                   "function", "block", "shared_bytes", "stream_of", "keep",
                                   "launch", "graph", nullptr};
  int params = 0, device_index = -1;
  unsigned long long function = 0;
  unsigned shared_bytes = 0;
  const char *device_type = nullptr;
  PyObject *inputs, *outputs, *symbol_names, *slots, *grid, *fallback, *error, *name;
  PyObject *block = Py_None, *stream_of = Py_None, *keep = Py_None, *launch = Py_None;
  int graph = 0;
  if (!PyArg_ParseTupleAndKeywords(
          args, kwargs, "iOOO!OOsiOOU|KOIOOOp", const_cast<char **>(keywords), &params,
          &inputs, &outputs, &PyTuple_Type, &symbol_names, &slots, &grid, &device_type,
          &device_index, &fallback, &error, &name, &function, &block, &shared_bytes, &stream_of,
          &keep, &launch, &graph))
    return nullptr;
  int symbols = static_cast<int>(PyTuple_GET_SIZE(symbol_names));
  if (params > kMaxParams || symbols > kMaxSymbols) {
    PyErr_SetString(PyExc_ValueError, "the kernel exceeds the native call's limits");
    return nullptr;
  }
  Call *self = reinterpret_cast<Call *>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->vectorcall = call_vectorcall;
  self->inputs = new std::vector<TensorPlan>();
  self->outputs = new std::vector<TensorPlan>();
  self->slots = new std::vector<Slot>();
  for (auto *&program : self->grid) program = new std::vector<int64_t>();
  self->params = params;
  self->symbols = symbols;
  self->function = reinterpret_cast<tilec_cuda::CUfunction>(function);
  self->graph = nullptr;
  self->shared_bytes = shared_bytes;
  for (PyObject **field : {&symbol_names, &stream_of, &fallback, &error, &name, &keep, &launch})
    Py_INCREF(*field);
  self->symbol_names = symbol_names;
  self->stream_of = stream_of;
  self->fallback = fallback;
  self->error = error;
  self->name = name;
  self->keep = keep;
  self->launch = launch;
  self->device_object = PyLong_FromLong(device_index);
  self->device_index = static_cast<c10::DeviceIndex>(device_index);
  PyObject *object = reinterpret_cast<PyObject *>(self);
  self->guard = nullptr;
  self->stream_known = false;
  try {
    self->device_type = c10::Device(device_type).type();
    if (self->device_type != c10::DeviceType::CPU)
      self->guard = c10::impl::getDeviceGuardImpl(self->device_type);
    self->keys = c10::DispatchKeySet(c10::computeDispatchKey(
        std::nullopt, std::nullopt, c10::Device(self->device_type)));
  } catch (const std::exception &caught) {
    PyErr_SetString(PyExc_ValueError, caught.what());
    Py_DECREF(object);
    return nullptr;
  }
  try {  // allocating straight from it skips the dispatcher; a torch without one: at::empty
    self->allocator = c10::GetAllocator(self->device_type);
  } catch (const std::exception &) {
    self->allocator = nullptr;
  }
  if (!read_tensors(inputs, *self->inputs, params, symbols) ||
      !read_tensors(outputs, *self->outputs, params, symbols)) {
    Py_DECREF(object);
    return nullptr;
  }
  std::vector<int> covered(params, 0);
  for (const auto *plans : {self->inputs, self->outputs})
    for (const TensorPlan &plan : *plans) ++covered[plan.position];
  for (int count : covered)
    if (count != 1) {
      PyErr_SetString(PyExc_ValueError, "every parameter must be one input or one output");
      Py_DECREF(object);
      return nullptr;
    }
  std::vector<int64_t> flat;
  if (!read_int64s(slots, flat, "slots must be a sequence of ints")) {
    Py_DECREF(object);
    return nullptr;
  }
  for (size_t i = 0; i + 1 < flat.size(); i += 2) self->slots->push_back({flat[i], flat[i + 1]});
  if (flat.size() % 2 != 0 || self->slots->size() > kMaxSlots) {
    PyErr_SetString(PyExc_ValueError, "slots must be (kind, value) pairs, at most 64");
    Py_DECREF(object);
    return nullptr;
  }
  for (const Slot &slot : *self->slots) {
    bool known = (slot.kind == kPointer && slot.value >= 0 && slot.value < params) ||
                 slot.kind == kConstant ||
                 (slot.kind == kSymbolValue && slot.value >= 0 && slot.value < symbols);
    if (!known) {
      PyErr_SetString(PyExc_ValueError, "a slot names an unknown parameter or symbol");
      Py_DECREF(object);
      return nullptr;
    }
  }
  PyObject *programs = PySequence_Fast(grid, "grid must be three programs");
  if (programs == nullptr || PySequence_Fast_GET_SIZE(programs) != 3) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "grid must be three programs");
    Py_XDECREF(programs);
    Py_DECREF(object);
    return nullptr;
  }
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<int64_t> &program = *self->grid[axis];
    if (!read_int64s(PySequence_Fast_GET_ITEM(programs, axis), program, "a grid program")) {
      Py_DECREF(programs);
      Py_DECREF(object);
      return nullptr;
    }
    bool wellformed = program_wellformed(program, symbols);
    if (!wellformed) {
      PyErr_SetString(PyExc_ValueError, "a grid program is malformed");
      Py_DECREF(programs);
      Py_DECREF(object);
      return nullptr;
    }
  }
  Py_DECREF(programs);
  if (self->function != nullptr) {
    std::vector<int64_t> sizes;
    if (!read_int64s(block, sizes, "block must be three sizes") || sizes.size() != 3) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "block must be three sizes");
      Py_DECREF(object);
      return nullptr;
    }
    for (int i = 0; i < 3; ++i) self->block[i] = static_cast<unsigned>(sizes[i]);
    if (!PyCallable_Check(stream_of)) {
      PyErr_SetString(PyExc_TypeError, "a CUDA call needs stream_of");
      Py_DECREF(object);
      return nullptr;
    }
    try {
      self->graph = new tilec_cuda::GraphLaunch(graph != 0);
    } catch (const std::exception &caught) {
      PyErr_SetString(PyExc_RuntimeError, caught.what());
      Py_DECREF(object);
      return nullptr;
    }
  } else if (!PyCallable_Check(launch)) {
    PyErr_SetString(PyExc_TypeError, "a Call without a CUDA function needs launch");
    Py_DECREF(object);
    return nullptr;
  }
  return object;
}

// How a CUDA call launches its kernel: GraphLaunch::reason() ("on", "off", or "off: " and
// why the graph launch stopped); None for a CPU artifact.
PyObject *call_graph_launch(PyObject *object, void *) {
  Call *self = reinterpret_cast<Call *>(object);
  if (self->graph == nullptr) Py_RETURN_NONE;
  return PyUnicode_FromString(self->graph->reason().c_str());
}

PyGetSetDef call_getset[] = {
    {"graph_launch", call_graph_launch, nullptr,
     "The one-node CUDA graph launch (TILEC_GRAPH_LAUNCH): 'on', 'off', or 'off: ' and why "
     "it stopped (its launches are cuLaunchKernel since); None on the CPU", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_launcher_torch",
    "tilec's native kernel call on torch tensors (checks, output allocation, launch)", -1,
    nullptr,
};

}  // namespace

PyMODINIT_FUNC PyInit__launcher_torch() {
  CallType.tp_name = "tilec.runtime._launcher_torch.Call";
  CallType.tp_doc = "One kernel specialization's call: the plan checks, allocates, launches";
  CallType.tp_basicsize = sizeof(Call);
  CallType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC;
  CallType.tp_traverse = call_traverse;
  CallType.tp_clear = call_clear;
  CallType.tp_new = call_new;
  CallType.tp_dealloc = call_dealloc;
  CallType.tp_getset = call_getset;
  CallType.tp_call = PyVectorcall_Call;
  CallType.tp_vectorcall_offset = offsetof(Call, vectorcall);
  if (PyType_Ready(&CallType) < 0) return nullptr;
  PyObject *module = PyModule_Create(&module_definition);
  if (module == nullptr) return nullptr;
  Py_INCREF(&CallType);
  if (PyModule_AddObject(module, "Call", reinterpret_cast<PyObject *>(&CallType)) < 0) {
    Py_DECREF(&CallType);
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
