// What the native aten observer knows of one op overload, shared by its
// callbacks (aten_observer.cpp) and the reading of a claimed op's values
// (values.cpp).

#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace tritontui {

// One op overload, found at its first call.
struct Op {
  Op(std::string base, std::string name, c10::OperatorHandle handle, bool composite)
      : base(std::move(base)),
        name(std::move(name)),
        handle(std::move(handle)),
        composite(composite) {}

  std::string base;  // "aten::mm": what RecordFunction names it
  std::string name;  // "aten::mm" with ".overload" unless default
  c10::OperatorHandle handle;
  bool composite;  // CompositeImplicitAutograd: decomposes above the mode
  // The attachment (its generation) whose core said it records no call
  // of this op (a view, an op its filter leaves out): 0 for none.
  std::atomic<uint64_t> left_out{0};
};

}  // namespace tritontui

#define TT_EXPORT __attribute__((visibility("default")))
