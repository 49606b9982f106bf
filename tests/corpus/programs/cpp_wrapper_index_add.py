"""A compiled index_add with colliding indices on two threads, compiled
with ``torch._inductor.config.cpp_wrapper = True`` while recording: its C++
wrapper calls the recorder around each launch. The output differs
between the runs (atomic adds), and the C++ kernel that adds is the
root cause."""

from _cpp_index_add import compiled_index_add
from _harness import parse, run

args = parse(__doc__)
added = compiled_index_add()
run(args, lambda: {"added": added()})
