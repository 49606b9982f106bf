// The native aten observer: a thread-local RecordFunction callback that
// finds the aten ops a Python dispatch mode would see and hands each to
// the recorder's Rust core (recorder/src/python/aten_observer.rs).
//
// It is C++ against torch's ABI, built for one torch version (build.rs)
// and loaded by the extension only where that version runs. It calls no
// Python C API itself: the core holds the GIL and owns every reference;
// the torch functions called here that make Python objects
// (toPyObject, getTHPDtype, getTorchApiFunction) are libtorch_python's,
// whose ABI is torch's, not Python's.
//
// Which ops: a dispatch mode sits below autograd, so it sees an op that
// reaches a backend (not a CompositeImplicitAutograd op, which decomposes
// into others above it) and none of the ops its kernel calls (the mode is
// off the stack while the op runs). The observer claims the outermost op
// of each nest that is not CompositeImplicitAutograd and ignores those
// under it. Ops of a tracer (a fake, proxy or functional mode on the
// stack, meta tensors) are not claimed.

#include "op.h"

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <c10/util/thread_name.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/PyInterpreter.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/csrc/utils/tensor_memoryformats.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

// The version of the interface below; the core refuses another.
constexpr int kAbi = 5;

// How an argument of a call is handed to Python, as torch's own
// `parseIValuesToPyArgsKwargs` hands it to `__torch_dispatch__`.
enum ArgPlace : uint8_t {
  kPositional = 0,
  kKeyword = 1,
};

using tritontui::Op;

// The core's callbacks, called with no lock held and the GIL not held.
// start: a claimed op's inputs (the GIL is the callee's to take); returns
// a token for end, or null when the core records nothing of it.
// end: the op's outputs, or raised != 0 when it raised.
using StartFn = void* (*)(void* core, const Op* op, const c10::IValue* inputs,
                          size_t count);
using EndFn = void (*)(void* core, void* token, const c10::IValue* outputs,
                       size_t count, int raised);
// step: an optimizer's `step()` begins (begins != 0) or ends on this thread.
using StepFn = void (*)(void* core, int begins);
// forget: memory an op that is not recorded may have written (its
// arguments and results), `count` (address, bytes) pairs.
using ForgetFn = void (*)(void* core, const uint64_t* spans, size_t count);

struct Core {
  void* core;
  StartFn start;
  EndFn end;
  StepFn step;
  ForgetFn forget;
};

// Ops by the address of their schema's name (stable while registered),
// checked against the name itself (an op registered again after another
// was dropped may have its address).
std::mutex ops_lock;
std::unordered_map<const char*, std::unique_ptr<Op>> ops;

// The core attached: one recording at a time per process. Its callbacks
// fire only on the threads it was attached on and those torch hands their
// state to, so the core is global, not per thread. Never freed: an op on
// another thread may still be ending when it is detached.
std::atomic<Core*> attached{nullptr};
// Counts attachments: what a core left out holds for its own only.
std::atomic<uint64_t> generation{0};

// The thread that attached the core. Its callbacks also fire on threads
// torch hands that thread's state to: autograd's workers, whose ops are
// the program's, and a collective backend's workers (gloo copying a CUDA
// tensor to the host and back), whose ops are the collective's own and
// which a dispatch mode never sees. Only the first two are observed.
std::atomic<pthread_t> attacher{};

// The callback this thread registered and has not removed (a recording
// stopped on another thread leaves it): removed before another is added,
// so that no op is claimed twice.
thread_local uint64_t registered = 0;
thread_local uint64_t registered_steps = 0;

// Per thread: optimizer steps begun and not ended (see on_step_start).
thread_local uint32_t steps_open = 0;

// Per thread: whether it is observed, as decided for attachment
// `observed_for` (0: not decided).
thread_local uint64_t observed_for = 0;
thread_local bool observed = false;

// Whether this thread's ops are observed: the attaching thread's and
// autograd's workers' (named `pt_autograd_N` by torch's engine).
bool observed_thread() {
  uint64_t now = generation.load(std::memory_order_relaxed);
  if (observed_for != now) {
    observed_for = now;
    observed = pthread_equal(pthread_self(), attacher.load()) != 0 ||
               c10::getThreadName().rfind("pt_autograd_", 0) == 0;
  }
  return observed;
}

// Per thread: how deep in nested RecordFunctions the thread is, and the
// depth of the claimed op (0: none).
thread_local uint32_t depth = 0;
thread_local uint32_t claimed_at = 0;

// What a claimed op's start hands to its end.
struct Claim : at::ObserverContext {
  Core* core = nullptr;
  void* token = nullptr;
  int exceptions = 0;
  // An op run with dispatch modes kept out, inside an optimizer step: the
  // memory it may write, where nothing records it (its arguments' storage,
  // read before it runs: they are not there after; its results' is added
  // after it).
  bool forgets = false;
  std::vector<uint64_t> spans;
};

const Op* find_op(const at::RecordFunction& fn) {
  const char* key = fn.name();
  {
    std::lock_guard<std::mutex> guard(ops_lock);
    auto found = ops.find(key);
    if (found != ops.end() && found->second->base == key) {
      return found->second.get();
    }
  }
  auto name = fn.operator_name();
  if (!name) {
    return nullptr;
  }
  auto handle = c10::Dispatcher::singleton().findOp(*name);
  if (!handle) {
    return nullptr;
  }
  auto op = std::make_unique<Op>(
      key, name->name + (name->overload_name.empty() ? "" : "." + name->overload_name), *handle,
      handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd));
  std::lock_guard<std::mutex> guard(ops_lock);
  auto& slot = ops[key];
  slot = std::move(op);
  return slot.get();
}

// Whether a tracer, not the program, is computing: a fake, proxy or
// functional mode is on the stack, or a tensor argument has no memory.
bool traced(c10::ArrayRef<const c10::IValue> inputs) {
  using c10::impl::TorchDispatchModeKey;
  using c10::impl::TorchDispatchModeTLS;
  for (auto key : {TorchDispatchModeKey::FAKE, TorchDispatchModeKey::PROXY,
                   TorchDispatchModeKey::FUNCTIONAL}) {
    if (TorchDispatchModeTLS::get_mode(key).has_value()) {
      return true;
    }
  }
  for (const auto& value : inputs) {
    if (value.isTensor()) {
      const auto& tensor = value.toTensor();
      if (tensor.defined() && (tensor.is_meta() ||
                               tensor.key_set().has(c10::DispatchKey::Functionalize))) {
        return true;
      }
    }
  }
  return false;
}

// The storage of each tensor in `inputs` and `outputs`: (address, bytes)
// pairs.
std::vector<uint64_t> storages(c10::ArrayRef<const c10::IValue> inputs,
                               c10::ArrayRef<const c10::IValue> outputs) {
  std::vector<uint64_t> spans;
  auto add = [&](const at::Tensor& tensor) {
    if (tensor.defined() && tensor.has_storage()) {
      const auto& storage = tensor.storage();
      spans.push_back(reinterpret_cast<uint64_t>(storage.data()));
      spans.push_back(storage.nbytes());
    }
  };
  for (auto values : {inputs, outputs}) {
    for (const auto& value : values) {
      if (value.isTensor()) {
        add(value.toTensor());
      } else if (value.isTensorList()) {
        for (const auto& tensor : value.toTensorVector()) {
          add(tensor);
        }
      }
    }
  }
  return spans;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  depth += 1;
  if (claimed_at != 0) {
    return nullptr;
  }
  try {
    if (!observed_thread()) {
      return nullptr;
    }
    const Op* op = find_op(fn);
    if (op == nullptr || op->composite) {
      return nullptr;
    }
    // From here the op is claimed: nothing under it is the mode's to see.
    claimed_at = depth;
    // Where torch keeps dispatch modes out (`torch.tensor` filling its new
    // tensor, `_DisableTorchDispatch`), the op and everything under it
    // is left out, as a mode would never see it. Inside an optimizer step,
    // where launches inherit hashes, the memory it may have written is
    // told to the core after it.
    if (c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::Python)) {
      Core* core = attached.load(std::memory_order_acquire);
      if (steps_open == 0 || core == nullptr) {
        return nullptr;
      }
      auto claim = std::make_unique<Claim>();
      claim->core = core;
      claim->forgets = true;
      claim->spans = storages(fn.inputs(), {});
      return claim;
    }
    if (op->left_out.load(std::memory_order_relaxed) ==
        generation.load(std::memory_order_relaxed)) {
      return nullptr;
    }
    // A tracer's op (fake tensors while a graph compiles) is left out with
    // all it runs.
    auto inputs = fn.inputs();
    Core* core = attached.load(std::memory_order_acquire);
    if (core == nullptr || traced(inputs)) {
      return nullptr;
    }
    auto claim = std::make_unique<Claim>();
    claim->exceptions = std::uncaught_exceptions();
    claim->core = core;
    claim->token = core->start(core->core, op, inputs.data(), inputs.size());
    return claim;
  } catch (...) {
    return nullptr;
  }
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* context) {
  if (claimed_at == depth) {
    auto* claim = static_cast<Claim*>(context);
    if (claim != nullptr && claim->forgets) {
      try {
        const auto& outputs = fn.outputs();
        auto& spans = claim->spans;
        auto results =
            storages({}, c10::ArrayRef<const c10::IValue>(outputs.data(), outputs.size()));
        spans.insert(spans.end(), results.begin(), results.end());
        claim->core->forget(claim->core->core, spans.data(), spans.size() / 2);
      } catch (...) {
      }
    } else if (claim != nullptr && claim->token != nullptr) {
      try {
        // Still claimed: what the core runs to record the op (a
        // collective's wait, a host value) is not the program's.
        const auto& outputs = fn.outputs();
        int raised = std::uncaught_exceptions() > claim->exceptions;
        claim->core->end(claim->core->core, claim->token, outputs.data(),
                         outputs.size(), raised);
      } catch (...) {
      }
    }
    claimed_at = 0;
  }
  depth -= 1;
}

// What an optimizer step's start hands to its end.
struct Step : at::ObserverContext {
  Core* core = nullptr;
};

// `Optimizer.step#Adam.step`: the profiler scope torch.optim opens around
// every optimizer's step() (`Optimizer.profile_hook_step`).
constexpr char kStepScope[] = "Optimizer.step#";

// An optimizer's step() begins on an observed thread: told to the core.
std::unique_ptr<at::ObserverContext> on_step_start(const at::RecordFunction& fn) {
  try {
    if (std::strncmp(fn.name(), kStepScope, sizeof(kStepScope) - 1) != 0 ||
        !observed_thread()) {
      return nullptr;
    }
    Core* core = attached.load(std::memory_order_acquire);
    if (core == nullptr) {
      return nullptr;
    }
    auto step = std::make_unique<Step>();
    step->core = core;
    steps_open += 1;
    core->step(core->core, 1);
    return step;
  } catch (...) {
    return nullptr;
  }
}

// The step begun in on_step_start ends (only one whose start was told).
void on_step_end(const at::RecordFunction&, at::ObserverContext* context) {
  auto* step = static_cast<Step*>(context);
  if (step == nullptr) {
    return;
  }
  steps_open -= 1;
  try {
    step->core->step(step->core->core, 0);
  } catch (...) {
  }
}

// Removes this thread's callbacks, if it has any.
void remove_callbacks() {
  for (uint64_t* handle : {&registered, &registered_steps}) {
    if (*handle != 0) {
      try {
        at::removeCallback(*handle);
      } catch (...) {
      }
      *handle = 0;
    }
  }
}

// A Python number as a wrapped number (the 0-dim tensor torch makes of a
// Python scalar argument) that has no Python object of its own: what
// toPyObject returns for it, without making it a Python tensor to ask it
// for a `_wrapped_number` attribute it cannot have (most of an eager op's
// conversion: a failed attribute lookup raises and clears an exception).
// Null for any other value, or on an error.
PyObject* wrapped_number_python(const c10::IValue& value) {
  if (!value.isTensor()) {
    return nullptr;
  }
  const auto& tensor = value.toTensor();
  auto* impl = tensor.unsafeGetTensorImpl();
  if (!impl->is_wrapped_number() || !tensor.device().is_cpu() ||
      impl->pyobj_slot()->load_pyobj() != nullptr) {
    return nullptr;
  }
  switch (tensor.scalar_type()) {
    case at::ScalarType::Bool:
      return PyBool_FromLong(*tensor.const_data_ptr<bool>() ? 1 : 0);
    case at::ScalarType::Long:
      return PyLong_FromLongLong(*tensor.const_data_ptr<int64_t>());
    case at::ScalarType::UInt64:
      return PyLong_FromUnsignedLongLong(*tensor.const_data_ptr<uint64_t>());
    case at::ScalarType::Double:
      return PyFloat_FromDouble(*tensor.const_data_ptr<double>());
    case at::ScalarType::ComplexDouble: {
      const auto z = *tensor.const_data_ptr<c10::complex<double>>();
      return PyComplex_FromDoubles(z.real(), z.imag());
    }
    default:
      return nullptr;
  }
}

}  // namespace

extern "C" {

// The version of this interface.
TT_EXPORT int tritontui_observer_abi() { return kAbi; }

// The torch version this library was built against.
TT_EXPORT const char* tritontui_observer_torch() { return TRITONTUI_TORCH_VERSION; }

// Runs `body(context, begin, end)` over pieces of [0, count), each at
// least `grain` long but the last, on torch's intra-op threads (as many as
// `torch.get_num_threads()` allows; inline inside a parallel region) and
// returns 0, or -1 when torch could not run them all (some may have run).
// `body` must not throw.
TT_EXPORT int tritontui_observer_parallel_for(int64_t count, int64_t grain,
                                              void (*body)(void*, int64_t, int64_t),
                                              void* context) {
  try {
    at::parallel_for(0, count, grain,
                     [&](int64_t begin, int64_t end) { body(context, begin, end); });
    return 0;
  } catch (...) {
    return -1;
  }
}

// Adds the observer to this thread (and the threads torch hands its
// state to: autograd's workers): returns its handle, or 0 on an error,
// with the message in `error` (`size` bytes). Without `ops`, only
// optimizer steps are observed: once any callback asks for an op's
// inputs, torch boxes every op's inputs for it, which a recording of
// fingerprints does not need.
TT_EXPORT uint64_t tritontui_observer_attach(void* core, StartFn start, EndFn end, StepFn step,
                                             ForgetFn forget, int ops, char* error,
                                             size_t size) {
  try {
    remove_callbacks();
    attacher.store(pthread_self());
    generation.fetch_add(1);
    attached.store(new Core{core, start, end, step, forget}, std::memory_order_release);
    auto steps = at::RecordFunctionCallback(on_step_start, on_step_end)
                     .scopes({at::RecordScope::USER_SCOPE});
    registered_steps = at::addThreadLocalCallback(steps);
    if (ops == 0) {
      return registered_steps;
    }
    auto callback = at::RecordFunctionCallback(on_start, on_end)
                        .needsInputs(true)
                        .needsOutputs(true)
                        .scopes({at::RecordScope::FUNCTION});
    registered = at::addThreadLocalCallback(callback);
    return registered;
  } catch (const std::exception& e) {
    std::snprintf(error, size, "%s", e.what());
    return 0;
  }
}

// Stops the observer `handle`: no op is claimed from now on (one claimed
// already is finished by the core it started with). Its
// callback is removed when it is this thread's; another thread's claims
// nothing from now on and is removed when that thread attaches again.
TT_EXPORT void tritontui_observer_detach(uint64_t handle) {
  attached.store(nullptr, std::memory_order_release);
  if (handle != (registered != 0 ? registered : registered_steps)) {
    return;  // another thread's: it is removed there at its next attach
  }
  remove_callbacks();
}

// The op's name, `aten::mm` or `aten::add.Tensor`.
TT_EXPORT const char* tritontui_observer_op_name(const Op* op) { return op->name.c_str(); }

// The core records no call of this op while attached now: later calls
// are let go before reaching it.
TT_EXPORT void tritontui_observer_leave_out(const Op* op) {
  const_cast<Op*>(op)->left_out.store(generation.load());
}

// The op's `OpOverload` (borrowed). The caller holds the GIL.
TT_EXPORT void* tritontui_observer_op_python(const Op* op) {
  try {
    return torch::detail::getTorchApiFunction(op->handle).ptr();
  } catch (...) {
    return nullptr;
  }
}

// The number of arguments of the op's schema.
TT_EXPORT size_t tritontui_observer_op_arguments(const Op* op) {
  return op->handle.schema().arguments().size();
}

// Argument `index`'s name and how torch hands it to `__torch_dispatch__`
// for these inputs: positional (0), keyword (1), or left out (2: a
// trailing positional argument or a keyword argument at its default).
TT_EXPORT int tritontui_observer_arg_place(const Op* op, const c10::IValue* inputs, size_t count,
                                 size_t index, const char** name) {
  const auto& arguments = op->handle.schema().arguments();
  if (index >= count || index >= arguments.size()) {
    return 2;
  }
  *name = arguments[index].name().c_str();
  auto is_default = [&](size_t i) {
    const auto& fallback = arguments[i].default_value();
    return fallback.has_value() && *fallback == inputs[i];
  };
  size_t keywords_at = count;
  while (keywords_at > 0 && arguments[keywords_at - 1].kwarg_only()) {
    keywords_at -= 1;
  }
  if (index >= keywords_at) {
    return is_default(index) ? 2 : kKeyword;
  }
  size_t defaults_at = keywords_at;
  while (defaults_at > 0 && is_default(defaults_at - 1)) {
    defaults_at -= 1;
  }
  return index < defaults_at ? kPositional : 2;
}

// How torch hands each argument to `__torch_dispatch__` for these inputs,
// as tritontui_observer_arg_place says of one, into `places` (`size`
// of them): all in one pass over the schema. 1, or 0 on an error.
TT_EXPORT int tritontui_observer_arg_places(const Op* op, const c10::IValue* inputs,
                                            size_t count, uint8_t* places, size_t size) try {
  const auto& arguments = op->handle.schema().arguments();
  size_t known = std::min(count, arguments.size());
  auto is_default = [&](size_t i) {
    const auto& fallback = arguments[i].default_value();
    return fallback.has_value() && *fallback == inputs[i];
  };
  size_t keywords_at = known;
  while (keywords_at > 0 && arguments[keywords_at - 1].kwarg_only()) {
    keywords_at -= 1;
  }
  size_t defaults_at = keywords_at;
  while (defaults_at > 0 && is_default(defaults_at - 1)) {
    defaults_at -= 1;
  }
  for (size_t index = 0; index < size; ++index) {
    if (index >= known) {
      places[index] = 2;
    } else if (index >= keywords_at) {
      places[index] = is_default(index) ? 2 : kKeyword;
    } else {
      places[index] = index < defaults_at ? kPositional : 2;
    }
  }
  return 1;
} catch (...) {
  return 0;
}

// Argument `index` as torch hands it to Python (a dtype, layout or memory
// format as its torch object, `*borrowed` set: the caller takes its own
// reference; else a new reference), or null on an error. The caller holds
// the GIL.
TT_EXPORT void* tritontui_observer_arg_python(const Op* op, const c10::IValue* inputs, size_t index,
                                    int* borrowed) {
  *borrowed = 0;
  try {
    const auto& value = inputs[index];
    const auto& type = op->handle.schema().arguments()[index].real_type();
    auto is = [&](c10::TypeKind kind) {
      if (type->kind() == kind) {
        return true;
      }
      auto optional = type->cast<c10::OptionalType>();
      return optional && optional->getElementType()->kind() == kind;
    };
    if (!value.isNone()) {
      PyObject* object = nullptr;
      if (is(c10::ScalarTypeType::Kind)) {
        object = reinterpret_cast<PyObject*>(
            torch::getTHPDtype(static_cast<c10::ScalarType>(value.toInt())));
      } else if (is(c10::LayoutType::Kind)) {
        object = reinterpret_cast<PyObject*>(
            torch::getTHPLayout(static_cast<c10::Layout>(value.toInt())));
      } else if (is(c10::MemoryFormatType::Kind)) {
        object = torch::utils::getTHPMemoryFormat(static_cast<c10::MemoryFormat>(value.toInt()));
      }
      if (object != nullptr) {
        *borrowed = 1;
        return object;
      }
    }
    if (PyObject* number = wrapped_number_python(value)) {
      return number;
    }
    return torch::jit::toPyObject(value).release().ptr();
  } catch (...) {
    return nullptr;
  }
}

// Output `index` of `values` as torch hands it to Python (a new
// reference), or null on an error. The caller holds the GIL.
TT_EXPORT void* tritontui_observer_value_python(const c10::IValue* values, size_t index) {
  try {
    return torch::jit::toPyObject(values[index]).release().ptr();
  } catch (...) {
    return nullptr;
  }
}

}  // extern "C"
