"""aten ops in the recorded region: eager ops and Inductor's extern
kernels (``extern_kernels.mm`` and the like), through the native
observer (a RecordFunction callback of the recorder's own, built for the
torch it runs on: ``recorder/src/python/aten_observer.rs``) or, where it
cannot load, a ``TorchDispatchMode``, which says so once. Both hand each
op to one native hook (``_native.AtenHook``) and record the same ops the
same way. With them, a divergent input can be traced to the
op that wrote it even when that op is not a compiled kernel.

Allocations (``empty`` and friends) are recorded without hashes and marked
``allocates``, so that reading memory nobody wrote since is told apart from
reading a value a launch produced.

Every dispatched op is named by its namespace (``aten::mm``,
``c10d::allreduce_``): torch.distributed's collectives are recorded like
any op. One that returns before the collective completes (a c10d op's
``Work``, a functional collective's results before ``wait_tensor``) is
waited for before its tensors are hashed after it: on the host that
blocks until the collective is done, on a GPU the current stream waits
for the collective's. An asynchronous collective thus loses its overlap
with what follows it while hashes are recorded. A send is recorded
without waiting (it only reads), a receive by ``hooks.point_to_point``
where the program waits for it."""

from __future__ import annotations

import sys
import types
import warnings
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .. import _environment, _host, _native, _tensors
from .._modules import module_path as module_path  # for the native hook
from .._unwritten import RNG_STATE_OUTPUTS, unwritten_outputs

_ALLOCATIONS = {
    "empty",
    "empty_strided",
    "empty_like",
    "new_empty",
    "new_empty_strided",
    "empty_permuted",
}

# torch.distributed's receives, not recorded here: their results are there
# only once the peer has sent, and waiting for that before the program goes
# on could deadlock an exchange (each rank receiving before it sends).
# `hooks.point_to_point` records each where the program waits for it.
_RECEIVES = {"c10d::recv_", "c10d::recv_any_source_"}
# A send only reads its tensors, and waiting for it could deadlock too.
_SEND = "c10d::send"

# Ops that only describe tensors or make views: nothing is computed.
# (`detach_` is autograd's alone: it never reaches a dispatch mode, and the
# native observer, which sees it, leaves it out too.)
_SKIP = {
    "detach",
    "detach_",
    "alias",
    "lift_fresh",
    "is_same_size",
    "sym_size",
    "sym_stride",
}

# Return types that hand a value to the host (`.item()` is
# `_local_scalar_dense`, `torch.equal` returns a bool).
_HOST_VALUE_TYPES = {
    "IntType",
    "FloatType",
    "BoolType",
    "NumberType",
    "ComplexType",
    "SymIntType",
    "SymFloatType",
    "SymBoolType",
}


def reads_to_host(func: Any) -> bool:
    """Whether the op returns a host value (a number or a bool): what it
    read is then part of the program's results."""
    return any(r.type.kind() in _HOST_VALUE_TYPES for r in func._schema.returns)


# Arguments an op writes part of and never reads, which its schema does not
# mark as written: FSDP2's all_gather_copy_in copies this rank's shards
# into its part of all_gather_output and returns that part as its first
# result. Each call records such an argument as handed out (allocated: not
# hashed, its bytes meaning nothing yet) and the part written through the
# result, so that neither the rest's stale bytes nor a read of them is
# blamed on the op.
_PARTLY_WRITTEN = {"fsdp::all_gather_copy_in": {"all_gather_output"}}


def _access(func: Any, arg: Any) -> str:
    """How op ``func`` uses a schema argument: ``in``, ``inout`` (a written
    ``self``) or ``out`` (a written keyword-only argument, or one of
    ``_PARTLY_WRITTEN``). The c10d ops' schemas mark no writes: their
    ``output*`` tensors are written, and the ``tensors`` an all-reduce,
    broadcast or reduce works in place are read and written (a send's
    are only read)."""
    name = func._schema.name
    if name == _SEND:
        return "in"
    if name.startswith("c10d::"):
        if arg.name.startswith("output"):
            return "out"
        return "inout" if arg.name == "tensors" else "in"
    if arg.name in _PARTLY_WRITTEN.get(name, ()):
        return "out"
    written = arg.alias_info is not None and arg.alias_info.is_write
    return ("out" if arg.kwarg_only else "inout") if written else "in"


def _call_access(func: Any, arg: Any) -> str:
    """How each call records a schema argument: as :func:`_access` says,
    but ``allocated`` for one of ``_PARTLY_WRITTEN``."""
    if arg.name in _PARTLY_WRITTEN.get(func._schema.name, ()):
        return "allocated"
    return _access(func, arg)


class AtenObserver:
    """Records each aten op as :class:`AtenRecorder` does, through the
    native observer attached to this thread (and the autograd threads its
    work goes to) until :meth:`detach`: no dispatch mode on the stack, no
    Python for the ops it does not record."""

    def __init__(self, session: Any, ops: bool = True) -> None:
        self.hook = _native.AtenHook(session, sys.modules[__name__])
        native = not _environment.aten_native_off()
        self._observer = _native.AtenObserver(self.hook, ops, native)

    def detach(self) -> None:
        """Stops recording aten ops (a second call does nothing)."""
        self._observer.detach()


# Whether the fallback to the dispatch mode was said already.
_FALLBACK_SAID = {"said": False}


def start(session: Any, ops: bool = True) -> AtenObserver | AtenRecorder:
    """The aten recorder of ``session``, recording from now on this
    thread: the native observer where it loads (unless
    ``TRITONTUI_ATEN_OBSERVER=0``), else the dispatch mode, pushed on
    the thread's dispatch stack, with a warning the first time saying
    why. Without ``ops`` the observer sees optimizer steps alone (no op
    is recorded: what fingerprints need outside a distributed run)."""
    if not _environment.aten_observer_off():
        available, why = _native.observer_status()
        if available:
            return AtenObserver(session, ops)
        if not _FALLBACK_SAID["said"]:
            _FALLBACK_SAID["said"] = True
            warnings.warn(
                f"tritontui: aten ops are recorded through a Python dispatch mode, "
                f"which costs more per op: {why}",
                RuntimeWarning,
                stacklevel=4,
            )
    mode = AtenRecorder(session)
    mode.__enter__()
    return mode


class AtenRecorder(TorchDispatchMode):
    """Records each aten op with its tensor arguments hashed before and
    after, into the session that installed it only: a mode left on a
    thread's stack records nothing into a later session.

    Its ``__torch_dispatch__`` is native (``_native.AtenHook``), bound to
    the instance: no Python frame per op. The hook asks this module what
    is fixed per op (:func:`plan`) and per argument shape (:func:`define`)
    once and caches the answers."""

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.hook = _native.AtenHook(session, sys.modules[__name__])
        self.__torch_dispatch__ = types.MethodType(self.hook, self)

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        # torch.compile traces and compiles as if the mode were not there.
        return True


# The helpers below are called by the native hook (the first time it
# meets an op or an argument shape, or for calls that need them), with
# Dynamo's frame callback off (recorder/src/python/dynamo_off.rs).


def _op_name(func: Any) -> tuple[str, str]:
    """The op's namespace-qualified name (``aten::mm``, ``c10d::allreduce_``)
    and its base name (``mm``)."""
    namespace, _, base = func._schema.name.rpartition("::")
    return f"{namespace or 'aten'}::{base}", base


# The namespace of the functional collectives of compiled graphs, whose
# results are there only once `wait_tensor` has been called on them.
_FUNCTIONAL = "_c10d_functional"


def returns_early(func: Any) -> bool:
    """Whether the op is a collective that returns before it completes: a
    c10d op returning a ``Work``, or a functional collective (other than
    ``wait_tensor`` itself)."""
    name, _ = _op_name(func)
    if name.startswith(_FUNCTIONAL + "::"):
        return name != _FUNCTIONAL + "::wait_tensor"
    if name == _SEND:
        return False
    return any(str(r.type).endswith("c10d.Work") for r in func._schema.returns)


# Ops whose results depend on numerics flags a program may switch while it
# runs (TF32, reduced-precision reductions, cuDNN, the BLAS library, the
# attention backends; deterministic algorithms for the scatter family; the
# thread count for reductions), by the start of their base names.
_SETTINGS_SENSITIVE = (
    "mm",
    "addmm",
    "_addmm_activation",
    "bmm",
    "baddbmm",
    "addbmm",
    "matmul",
    "linear",
    "mv",
    "addmv",
    "dot",
    "_scaled_mm",
    "conv",
    "_conv",
    "cudnn_",
    "miopen_",
    "mkldnn_",
    "_scaled_dot_product",
    "scaled_dot_product",
    "_flash_attention",
    "_efficient_attention",
    "_cudnn_attention",
    "index_add",
    "index_put",
    "_index_put",
    "index_reduce",
    "scatter",
    "put",
    "cumsum",
    "embedding_dense_backward",
    "_embedding_bag",
    # Reductions over many elements split their work by the thread count.
    "sum",
    "mean",
    "nansum",
    "prod",
    "norm",
    "linalg_vector_norm",
    "var",
    "std",
    "logsumexp",
)

# The pseudo-argument a random op's launch record ends its schema's with:
# the state of the default generator it draws from.
RANDOM_STATE_ARG = "default_generator"


def draws_random(func: Any) -> bool:
    """Whether op ``func`` draws random numbers (torch tags it
    ``nondeterministic_seeded``: ``rand*``, dropout, attention, and the
    ``randint.low_out`` with which Inductor draws its seeds). The
    attention backwards carry the tag too, but replay the Philox seed and
    offset their forward handed them (inputs already) and draw nothing."""
    return torch.Tag.nondeterministic_seeded in func.tags and "backward" not in func._schema.name


# Copies that may move a device tensor's bytes into host memory.
_COPIES = {"_to_copy", "copy_"}


def copies_to_host(
    func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None, out: Any
) -> bool:
    """Whether a copy op just moved a device tensor's bytes into host
    memory (``.cpu()``, ``.to("cpu")``, a host tensor's ``copy_``): what it
    read is then in the host's hands, part of the program's results."""
    kwargs = kwargs or {}
    if func._schema.name.endswith("copy_"):  # copy_(self, src): self written
        dest = args[0] if args else kwargs.get("self")
        src = args[1] if len(args) > 1 else kwargs.get("src")
    else:  # _to_copy(self) -> the copy
        dest, src = out, args[0] if args else kwargs.get("self")
    return (
        isinstance(dest, torch.Tensor)
        and isinstance(src, torch.Tensor)
        and dest.device.type == "cpu"
        and src.device.type != "cpu"
    )


def plan(
    session: Any, func: Any
) -> tuple[Any, str | None, list[tuple[str, int]], dict[str, bool] | None]:
    """What is fixed for op ``func``: what runs it, its kernel name and
    its schema's arguments with their access codes (None and nothing when
    it is not recorded), and its traits: whether it allocates, whether it
    may leave results unwritten, whether its results are only there once
    it is waited for (a collective, :func:`wait_for_collective`), whether
    the numerics flags are sampled before it (:func:`sample_settings`),
    whether it draws random numbers (:func:`random_state`), whether it
    may copy device bytes to the host (:func:`copies_to_host`), whether
    it may be Inductor's dtype probe (:func:`dtype_probe`) and whether it
    writes only what its schema says (:func:`writes_declared`)."""
    run = func._op if type(func) is torch._ops.OpOverload else func
    name, base = _op_name(func)
    if func.is_view or base in _SKIP or name in _RECEIVES or not session.wants(name):
        return run, None, [], None
    if session.fingerprints_now and not fingerprinted(func):
        return run, None, [], None
    params = [
        (arg.name, ord(_tensors.ACCESS_CODES[_call_access(func, arg)]))
        for arg in func._schema.arguments
    ]
    traits = {
        "allocates": base in _ALLOCATIONS,
        "checks_unwritten": base in RNG_STATE_OUTPUTS,
        "waits": returns_early(func),
        "samples_settings": base.startswith(_SETTINGS_SENSITIVE),
        "draws_random": draws_random(func),
        "may_copy_to_host": base in _COPIES,
        "may_be_dtype_probe": base == "empty",
        "writes_declared": writes_declared(name),
    }
    return run, name, params, traits


def fingerprinted(func: Any) -> bool:
    """Whether op ``func`` is recorded while only fingerprints are: a host
    read, whose every result is a value in the host's hands (``.item()``,
    ``torch.equal``; not an attention op that also returns its sizes), or
    a collective (the data ranks exchange). Copies are not: telling one
    that leaves for the host from the others asks Python of every copy,
    and what a ``.cpu()`` copy holds reaches the program through later
    fingerprinted work or its results."""
    name, _ = _op_name(func)
    returns = func._schema.returns
    host_only = bool(returns) and all(r.type.kind() in _HOST_VALUE_TYPES for r in returns)
    return host_only or name.startswith(("c10d::", _FUNCTIONAL + "::"))


def writes_declared(name: str) -> bool:
    """Whether op ``name`` writes only the arguments its schema marks
    written, so that an argument it only reads, sharing no byte with one
    it writes, keeps its bytes: aten's own ops (whose schemas
    functionalization relies on). Not the c10d ops, whose schemas mark no
    writes and whose collectives read their inputs after returning, nor
    any other namespace's (a custom op's schema is its author's word)."""
    return name.startswith("aten::")


# How far up the Python stack a 0-dim empty looks for Inductor's dtype probe
# (through the dispatch modes and torch's disabled-Dynamo wrappers between).
_PROBE_DEPTH = 12


def dtype_probe() -> bool:
    """Whether the 0-dim ``torch.empty`` being dispatched is Inductor asking
    a dtype's size (``torch._inductor.utils.get_dtype_size``, cached per
    dtype), not the program's work. It runs when a graph compiles, where
    the mode ignores it, and again at the first call of a graph loaded from
    Inductor's cache: recorded, it made a run served by the cache one
    launch longer than a run that compiled."""
    frame = sys._getframe(1)
    for _ in range(_PROBE_DEPTH):
        if frame is None:
            return False
        code = frame.f_code
        if code.co_name == "get_dtype_size" and code.co_filename.replace("\\", "/").endswith(
            "torch/_inductor/utils.py"
        ):
            return True
        frame = frame.f_back
    return False


def sample_settings(session: Any) -> None:
    """Samples the numerics flags before an op they change (outside a
    graph call, whose own call sampled them)."""
    session.sample_settings()


def random_state(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> str:
    """What a random op draws from, read before it runs: the state of the
    default generator of its device (``<default generator cuda:0 seed=S
    offset=O>``, ``<default generator cpu seed=S state=H>``), or ``<generator
    given>`` when the call passes its own (recorded as its ``generator``
    argument)."""
    kwargs = kwargs or {}
    first = None
    for value in _schema_values(args, kwargs):
        if isinstance(value, torch.Generator):
            return "<generator given>"
        if first is None and isinstance(value, torch.Tensor):
            first = value.device
    device = kwargs.get("device")
    if device is None:
        device = first
    device = torch.device(device) if device is not None else torch.get_default_device()
    return _host.default_generator_value(device)


def _schema_values(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The values an op was called with, in order, with those of its list
    arguments (``Tensor[]``, the deepest an aten schema nests) in their
    place: what ``tree_leaves`` would give, without its cost per op."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, (list, tuple)):
            yield from value
        else:
            yield value


def traced(args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> bool:
    """Whether an op is a tracer's, not the program's: a mode that traces
    (fake tensors, proxies, functionalization) is active, or a tensor
    argument has no memory (a fake, functional or meta tensor)."""
    from torch._subclasses.fake_tensor import is_fake
    from torch.utils._pytree import tree_leaves

    keys = torch._C._TorchDispatchModeKey
    if any(
        torch._C._get_dispatch_mode(k) is not None for k in (keys.FAKE, keys.PROXY, keys.FUNCTIONAL)
    ):
        return True
    return any(
        isinstance(t, torch.Tensor) and (t.is_meta or is_fake(t) or torch._is_functional_tensor(t))
        for t in tree_leaves((args, kwargs or {}))
    )


def wait_for_collective(func: Any, out: Any) -> None:
    """Waits for the collective op ``func`` that returned ``out``, so that
    its tensors hold the result when they are hashed: a c10d op's ``Work``
    is waited for, a functional collective's tensors go through
    ``wait_tensor`` (the program's own ``wait_tensor`` then finds nothing
    left to wait for). On the host this blocks until the collective is
    done; on a GPU the current stream waits for the collective's."""
    values = out if isinstance(out, (tuple, list)) else (out,)
    if _op_name(func)[0].startswith(_FUNCTIONAL + "::"):
        for value in values:
            for tensor in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(tensor, torch.Tensor):
                    torch.ops._c10d_functional.wait_tensor(tensor)
        return
    work = getattr(getattr(torch._C, "_distributed_c10d", None), "Work", None)
    if work is None:
        return
    for value in values:
        if isinstance(value, torch.ScriptObject) and str(value._type()).endswith("c10d.Work"):
            # What the dispatcher hands back: torch.distributed unboxes it.
            value = work.unbox(value)
        if isinstance(value, work):
            value.wait()


def define(
    session: Any,
    func: Any,
    spread: list[int],
    positions: list[int],
    returned: int,
    to_host: bool = False,
) -> tuple[int, list[str], bytes]:
    """The kernel of op ``func`` called with its arguments spread as
    ``spread`` says (per schema argument: -2 absent, -1 one value, n a list
    of n tensors, or lists of tensors holding n in all, named by their
    place in that order) that returned ``returned`` values, new tensors at
    ``positions``; with those results' names and access codes. A copy
    that moved device bytes to the host (``to_host``) is a kernel of its
    own, marked ``host_read``."""
    arg_specs = []
    for arg, count in zip(func._schema.arguments, spread, strict=True):
        access = _access(func, arg)
        if count == -2:
            continue
        if count == -1:
            arg_specs.append((arg.name, access))
        else:
            arg_specs.extend((f"{arg.name}[{k}]", access) for k in range(count))
    if draws_random(func):
        arg_specs.append((RANDOM_STATE_ARG, "in"))
    results = _result_names(func, positions, returned)
    arg_specs += [(result, "out") for result in results]
    qualified, base = _op_name(func)
    allocates = base in _ALLOCATIONS
    name = qualified + (f".{func._overloadname}" if func._overloadname != "default" else "")

    def definition() -> dict[str, Any]:
        meta: dict[str, Any] = {"allocates": allocates}
        if to_host or reads_to_host(func):
            meta["host_read"] = True
        return {
            "name": name,
            "backend": "aten",
            "args": [{"name": n, "type": "", "access": a} for n, a in arg_specs],
            "source": None,
            "meta": meta,
            "config": {},
        }

    key = ("aten", name, tuple(arg_specs)) + (("to_host",) if to_host else ())
    kernel = session.kernel_id(key, definition)
    # Fresh memory's bytes mean nothing, so an allocation is not hashed.
    codes = (b"a" if allocates else b"o") * len(results)
    return kernel, results, codes


def result_codes(
    func: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None,
    results: list[str],
    codes: bytes,
) -> bytes:
    """``codes`` with the results this call leaves unwritten marked as
    allocated (``tritontui._unwritten``): not hashed, never written.
    torch leaves out of ``args`` and ``kwargs`` the trailing arguments
    that hold their defaults (``dropout_p=0.0`` where ``is_causal`` is
    false): an argument found in neither has its schema's default."""
    kwargs = kwargs or {}
    dropout = next(
        (
            args[i] if i < len(args) else kwargs.get(arg.name, arg.default_value)
            for i, arg in enumerate(func._schema.arguments)
            if arg.name == "dropout_p"
        ),
        None,
    )
    unwritten = unwritten_outputs(_op_name(func)[1], [("dropout_p", "", dropout)])
    return bytes(ord("a") if r in unwritten else c for r, c in zip(results, codes, strict=True))


def _result_names(func: Any, positions: list[int], returned: int) -> list[str]:
    """The new tensors an op returned, each named by its schema
    (``result``, or ``result{i}`` by position, where the schema names
    none). A returned argument (an out= variant's) is recorded already."""
    returns = [r.name for r in func._schema.returns]
    # A Tensor[] return spreads over several values: name them by position.
    named = returned == len(returns)
    return [
        (returns[i] if named else "") or (f"result{i}" if returned > 1 else "result")
        for i in positions
    ]
