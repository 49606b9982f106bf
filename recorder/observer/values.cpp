// A claimed op's values read for the recorder's core with no Python
// object made: what kind each is, a tensor's layout and memory, numbers,
// strings and list items; and a tensor kept alive by the core (or made
// a Python object, where the core needs one). The core
// (recorder/src/python/observed_values.rs) records an op this way when
// every value it has can be read so; anything else (a tensor subclass, a
// process group, a generator) is made Python objects as before.
//
// Every pointer handed out is borrowed from the values, which the core
// reads while the op's callback runs; a tensor it keeps past that is
// retained (tritontui_observer_tensor_retain) and released once.

#include "op.h"

#include <ATen/core/ivalue.h>
#include <c10/core/TensorImpl.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>

namespace {

using tritontui::Op;

// What a value is, as the core reads it (src/python/observed_values.rs).
enum ValueKind : int {
  kNone = 0,     // None, or an undefined tensor
  kTensor = 1,   // a defined tensor (not a Python number's wrapper)
  kInt = 2,      // an int, or a Python int's wrapped-number tensor
  kDouble = 3,   // a float, or a Python float's wrapped-number tensor
  kBool = 4,     // a bool, or a Python bool's wrapped-number tensor
  kString = 5,   // a string
  kList = 6,     // a list: its items are values of their own
  kSettled = 7,  // a dtype, layout, memory format or device (see settled_key)
  kOther = 8,    // anything else: only Python can say what it is
};

// A tensor's layout and memory as the core records them.
struct TensorFacts {
  uint64_t ptr;            // its storage's address plus its offset's bytes
  uint64_t storage_bytes;  // its storage's size in bytes
  uint64_t offset;         // its storage offset, in elements
  const int64_t* sizes;    // borrowed from the tensor
  const int64_t* strides;  // borrowed from the tensor
  uint64_t dims;
  int32_t device;  // a CUDA device's index, or -1 for the host
  int32_t dtype;   // its c10::ScalarType
  uint32_t itemsize;
  uint32_t reserved;
  void* impl;  // its TensorImpl, borrowed
};

// Categories of settled values, the high half of their key.
constexpr int64_t kDtypeKey = 1;
constexpr int64_t kLayoutKey = 2;
constexpr int64_t kMemoryFormatKey = 3;
constexpr int64_t kDeviceKey = 4;

// The schema argument `index`'s type is `kind` or an optional of it.
bool typed(const Op* op, size_t index, c10::TypeKind kind) {
  if (op == nullptr) {
    return false;
  }
  const auto& arguments = op->handle.schema().arguments();
  if (index >= arguments.size()) {
    return false;
  }
  const auto& type = arguments[index].real_type();
  if (type->kind() == kind) {
    return true;
  }
  auto optional = type->cast<c10::OptionalType>();
  return optional && optional->getElementType()->kind() == kind;
}

// The settled category of argument `index` holding `value`, or 0.
int64_t settled_category(const Op* op, size_t index, const c10::IValue& value) {
  if (value.isDevice()) {
    return kDeviceKey;
  }
  if (!value.isInt()) {
    return 0;
  }
  if (typed(op, index, c10::ScalarTypeType::Kind)) {
    return kDtypeKey;
  }
  if (typed(op, index, c10::LayoutType::Kind)) {
    return kLayoutKey;
  }
  if (typed(op, index, c10::MemoryFormatType::Kind)) {
    return kMemoryFormatKey;
  }
  return 0;
}

// A wrapped number (the 0-dim tensor torch makes of a Python scalar
// argument) with no Python object of its own: Python is handed the
// number itself (aten_observer.cpp, wrapped_number_python).
bool bare_number(const at::Tensor& tensor) {
  auto* impl = tensor.unsafeGetTensorImpl();
  return impl->is_wrapped_number() && tensor.device().is_cpu() &&
         impl->pyobj_slot()->load_pyobj() == nullptr;
}

// The kind of a bare number's value.
int number_kind(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::ScalarType::Bool:
      return kBool;
    case at::ScalarType::Long:
      return kInt;
    case at::ScalarType::Double:
      return kDouble;
    default:
      return kOther;
  }
}

}  // namespace

extern "C" {

// Value `index` of `values` (a call's inputs or outputs, or a list's items).
TT_EXPORT const c10::IValue* tritontui_observer_value_at(const c10::IValue* values,
                                                         size_t index) {
  return values + index;
}

// The kind of `value`, argument `index` of op `op`'s schema (op null: a
// result or a list's item, whose schema type is not asked).
TT_EXPORT int tritontui_observer_kind(const Op* op, size_t index, const c10::IValue* value) {
  try {
    const auto& v = *value;
    if (v.isNone()) {
      return kNone;
    }
    if (v.isTensor()) {
      const auto& tensor = v.toTensor();
      if (!tensor.defined()) {
        return kNone;
      }
      return bare_number(tensor) ? number_kind(tensor) : kTensor;
    }
    if (settled_category(op, index, v) != 0) {
      return kSettled;
    }
    if (v.isInt()) {
      return kInt;
    }
    if (v.isDouble()) {
      return kDouble;
    }
    if (v.isBool()) {
      return kBool;
    }
    if (v.isString()) {
      return kString;
    }
    if (v.isList()) {
      return kList;
    }
    return kOther;
  } catch (...) {
    return kOther;
  }
}

// An int value (kInt): the int, or a wrapped number's.
TT_EXPORT int64_t tritontui_observer_int(const c10::IValue* value) {
  try {
    return value->isTensor() ? *value->toTensor().const_data_ptr<int64_t>() : value->toInt();
  } catch (...) {
    return 0;
  }
}

// A float value (kDouble): the float, or a wrapped number's.
TT_EXPORT double tritontui_observer_double(const c10::IValue* value) {
  try {
    return value->isTensor() ? *value->toTensor().const_data_ptr<double>() : value->toDouble();
  } catch (...) {
    return 0.0;
  }
}

// A bool value (kBool): 1 or 0.
TT_EXPORT int tritontui_observer_bool(const c10::IValue* value) {
  try {
    return (value->isTensor() ? *value->toTensor().const_data_ptr<bool>() : value->toBool()) ? 1
                                                                                             : 0;
  } catch (...) {
    return 0;
  }
}

// A string value (kString): its bytes (borrowed) and their count.
TT_EXPORT const char* tritontui_observer_string(const c10::IValue* value, size_t* length) {
  try {
    auto text = value->toStringView();
    *length = text.size();
    return text.data();
  } catch (...) {
    *length = 0;
    return nullptr;
  }
}

// A list's length (kList).
TT_EXPORT size_t tritontui_observer_list_length(const c10::IValue* value) {
  try {
    return value->toListRef().size();
  } catch (...) {
    return 0;
  }
}

// A list's item `item` (borrowed), or null.
TT_EXPORT const c10::IValue* tritontui_observer_list_item(const c10::IValue* value, size_t item) {
  try {
    auto items = value->toListRef();
    return item < items.size() ? &items[item] : nullptr;
  } catch (...) {
    return nullptr;
  }
}

// A settled value's key (kSettled): its category in the high half, its
// code in the low; one text per key, which the core asks Python once.
TT_EXPORT int64_t tritontui_observer_settled_key(const Op* op, size_t index,
                                                 const c10::IValue* value) {
  try {
    int64_t category = settled_category(op, index, *value);
    if (category == kDeviceKey) {
      auto device = value->toDevice();
      return (category << 32) | (static_cast<int64_t>(device.type()) << 16) |
             static_cast<uint16_t>(device.index() + 1);
    }
    return (category << 32) | static_cast<uint32_t>(value->toInt());
  } catch (...) {
    return 0;
  }
}

// Reads tensor `value` (kTensor) into `facts`: 1, or 0 for one the core
// must read through Python (not strided, no storage, symbolic sizes,
// neither on the host nor on a CUDA device, a Python subclass, or an
// object of a type other than torch.Tensor and torch.nn.Parameter). The
// caller holds the GIL.
TT_EXPORT int tritontui_observer_tensor(const c10::IValue* value, TensorFacts* facts) {
  try {
    if (!value->isTensor()) {
      return 0;
    }
    const auto& tensor = value->toTensor();
    auto* impl = tensor.unsafeGetTensorImpl();
    if (!tensor.defined() || impl->layout() != c10::kStrided || !impl->has_storage() ||
        impl->has_symbolic_sizes_strides() ||
        impl->key_set().has(c10::DispatchKey::Python)) {
      return 0;
    }
    if (PyObject* object = impl->pyobj_slot()->load_pyobj()) {
      auto* type = Py_TYPE(object);
      if (type != reinterpret_cast<PyTypeObject*>(THPVariableClass) &&
          type != reinterpret_cast<PyTypeObject*>(ParameterClass)) {
        return 0;
      }
    }
    auto device = impl->device();
    if (!device.is_cuda() && !device.is_cpu()) {
      return 0;
    }
    // As the recorder reads it from the TensorImpl (tensor_impl.rs): the
    // storage's address plus the offset, for an empty tensor too.
    const auto& storage = impl->storage();
    facts->offset = static_cast<uint64_t>(impl->storage_offset());
    facts->ptr = reinterpret_cast<uint64_t>(storage.data()) + facts->offset * impl->itemsize();
    facts->storage_bytes = storage.nbytes();
    auto sizes = impl->sizes();
    auto strides = impl->strides();
    facts->sizes = sizes.data();
    facts->strides = strides.data();
    facts->dims = sizes.size();
    facts->device = device.is_cuda() ? device.index() : -1;
    facts->dtype = static_cast<int32_t>(c10::typeMetaToScalarType(impl->dtype()));
    facts->itemsize = static_cast<uint32_t>(impl->itemsize());
    facts->reserved = 0;
    facts->impl = impl;
    return 1;
  } catch (...) {
    return 0;
  }
}

// The TensorImpl of tensor `value` (borrowed), or null: a result that is
// one of the op's arguments (as an out= variant returns it) has that
// argument's.
TT_EXPORT void* tritontui_observer_tensor_impl(const c10::IValue* value) {
  if (!value->isTensor()) {
    return nullptr;
  }
  return value->toTensor().unsafeGetTensorImpl();
}

// A new reference to TensorImpl `impl`, for the core to release once.
TT_EXPORT void tritontui_observer_tensor_retain(void* impl) {
  c10::raw::intrusive_ptr::incref(static_cast<c10::TensorImpl*>(impl));
}

// Releases a reference the core retained.
TT_EXPORT void tritontui_observer_tensor_release(void* impl) {
  c10::raw::intrusive_ptr::decref(static_cast<c10::TensorImpl*>(impl));
}

// TensorImpl `impl` as a Python tensor (a new reference), or null. The
// caller holds the GIL.
TT_EXPORT void* tritontui_observer_tensor_python(void* impl) {
  try {
    using Pointer = c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;
    at::Tensor tensor(Pointer::reclaim_copy(static_cast<c10::TensorImpl*>(impl)));
    return THPVariable_Wrap(std::move(tensor));
  } catch (...) {
    return nullptr;
  }
}

// The torch dtype of c10::ScalarType `code` (borrowed), or null. The
// caller holds the GIL.
TT_EXPORT void* tritontui_observer_dtype_python(int32_t code) {
  try {
    return torch::getTHPDtype(static_cast<c10::ScalarType>(code));
  } catch (...) {
    return nullptr;
  }
}

// How many dispatch modes are on this thread's stack (a tracer's maybe).
TT_EXPORT int64_t tritontui_observer_modes() {
  return c10::impl::TorchDispatchModeTLS::stack_len();
}

}  // extern "C"
