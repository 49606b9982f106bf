"""Methods of torch's C++ classes (``Work.wait``, ``ProcessGroup.recv``,
the AOTInductor loader's ``run``) replaced while recording, in the form
pybind11 gives them, so that Dynamo treats the replacement as it treats
the method replaced.

Dynamo inlines a Python function it finds on a class, and treats a C++
method (an ``instancemethod`` around a built-in function) as a call it
cannot trace. A plain function in place of ``Work.wait`` made Dynamo
trace into the recorder where a compiled function calls ``work.wait()``:
the same graph break, for another reason; a descriptor of the
recorder's own it could not trace past at all. :func:`method` wraps the
replacement in an ``instancemethod`` too (``PyInstanceMethod_New``, the
call pybind11 makes)."""

from __future__ import annotations

import ctypes
from typing import Any

_INSTANCE_METHOD = ctypes.pythonapi.PyInstanceMethod_New
_INSTANCE_METHOD.argtypes = [ctypes.py_object]
_INSTANCE_METHOD.restype = ctypes.py_object


def method(function: Any) -> Any:
    """``function`` as a method of a C++ class: called with the instance
    first, as the method it replaces was."""
    return _INSTANCE_METHOD(function)
