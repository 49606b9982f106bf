"""The process groups this process becomes a member of, each written as a
``process_group`` record (trace format 1.8): its name (as collectives
name it), torch's description of it, its backend and its members' global
ranks.

Every way torch makes a group (``init_process_group``'s default group,
``new_group``, ``split_group``, a device mesh's groups) ends by entering
the group's rank mapping in ``distributed_c10d._pg_group_ranks``, after
its name and backend are known; while installed that dict is one that
records each entry. Groups that exist when recording starts are recorded
then."""

from __future__ import annotations

import sys
from typing import Any

from .. import _active


class _Recording(dict):
    """``_pg_group_ranks`` while installed: records each group entered."""

    def __setitem__(self, group: Any, ranks: dict[int, int]) -> None:
        super().__setitem__(group, ranks)
        _record(group, ranks, _active.active())


def _c10d() -> Any:
    """torch's c10d module, when torch.distributed is there."""
    return sys.modules.get("torch.distributed.distributed_c10d")


def install(session: Any) -> None:
    """Records the groups that exist into ``session``, and each one made
    from now on into the active session."""
    c10d = _c10d()
    mapping = getattr(c10d, "_pg_group_ranks", None)
    if not isinstance(mapping, dict) or isinstance(mapping, _Recording):
        return
    c10d._pg_group_ranks = _Recording(mapping)
    for group, ranks in mapping.items():
        _record(group, ranks, session)


def uninstall() -> None:
    """Puts a plain dict with the same groups back."""
    c10d = _c10d()
    mapping = getattr(c10d, "_pg_group_ranks", None)
    if isinstance(mapping, _Recording):
        c10d._pg_group_ranks = dict(mapping)


def _record(group: Any, ranks: dict[int, int], session: Any) -> None:
    if session is None:
        return
    try:
        with _active.dynamo_off():
            world = _c10d()._world
            name = world.pg_names.get(group)
            if name is None:  # a group this process is not a member of
                return
            backend = world.pg_map.get(group, ("",))[0]
            in_order = [int(g) for g, _ in sorted(ranks.items(), key=lambda item: item[1])]
            session.file.process_group(str(name), _description(group), str(backend or ""), in_order)
    except Exception as e:
        session.fail(e)


def _description(group: Any) -> str:
    """torch's description of a group ("" where it has none)."""
    desc = str(getattr(group, "group_desc", "") or "")
    return "" if desc == "undefined" else desc
