"""A plan's datastores (``[datastores.NAME]``): each is made before the first cell whose data
lives on it and destroyed after the last (``keep = true`` keeps it). One that exists already
and has what the plan asks (a kept one, one an interrupted plan left for ``--resume``, or one
made by hand, with ``datastore create``) is used as it is: the policies the plan sets are
compared with those the file system has (a policy the plan leaves unset is mkfs' choice, not
compared), and its devices with the plan's. One that differs is refused for its cells, naming
what differs.

A fault that changes a datastore (``ALTERING_FAULTS``: a device removed, replaced or failing,
another data profile) leaves it otherwise than the plan made it, so the plan marks it
(``altered`` in its record) before such a run, and before any later run on it - the next repeat,
the next cell, a resumed plan - makes it again as the plan asks: destroyed, made and, by the
cell, its schema built again. A run whose datastore still differs from the plan's when it
starts fails, naming the difference.

An interrupted or failed plan leaves its datastores, so that ``plan run --resume`` finds them;
``datastore destroy`` removes them.
"""

from __future__ import annotations

from ..datastores.spec import altering, same_set
from ..errors import OltplabError


def last_cells(plan, cells=None) -> dict[str, int]:
    """Datastore name -> the index of the last cell with an item on it (of ``cells``, when
    given: those one host runs)."""
    out: dict[str, int] = {}
    among = None if cells is None else {c.index for c in cells}
    for item in plan.items:
        if item.cell.datastore is not None and (among is None or item.cell.index in among):
            out[item.cell.datastore.name] = max(out.get(item.cell.datastore.name, -1),
                                                item.cell.index)
    return out


def _record(spec) -> dict | None:
    """The record of the datastore of the spec's name, or None when there is none."""
    from ..datastores import service
    if not (service.folder(spec.name, spec.root) / "datastore.json").exists():
        return None
    return service.load(spec.name, spec.root)


def made_as_asked(spec, doc: dict) -> bool:
    """The datastore was made with the spec's words on the spec's devices (by this plan, or
    one like it): what a fault changed since is the plan's to restore."""
    if doc.get("asked") != spec.policy():
        return False
    if spec.loop_count:
        return doc.get("loop") == {"count": spec.loop_count, "bytes": spec.loop_bytes}
    had = {*doc.get("removed", []), *doc["devices"], *doc.get("spares", [])}
    return same_set(had) == same_set({*spec.devices, *spec.spares})


def why_restore(spec, doc: dict) -> str | None:
    """Why the plan makes the datastore again before a run on it, or None: a fault of the
    plan changed it, or it was made as the plan asks and differs now."""
    if doc.get("altered"):
        return f"changed by --inject {', '.join(doc['altered'])}"
    diffs = spec.differences(doc) if made_as_asked(spec, doc) else []
    return "; ".join(d.text(spec.name) for d in diffs) or None


def restore_reason(spec) -> str | None:
    """Why the datastore is to be made again before the next run on it (``why_restore``), or
    None (as the plan asks, or gone: ``check_at_start`` says so)."""
    doc = _record(spec)
    return None if doc is None else why_restore(spec, doc)


def state(spec) -> str:
    """What ``plan run`` will do with the datastore, as ``plan show`` says it."""
    try:
        doc = _record(spec)
    except OltplabError as e:
        return f"exists, unreadable: {e}"
    if doc is None:
        return "will be made"
    why = why_restore(spec, doc)
    if why is not None:
        return f"exists, will be made again ({why})"
    diffs = spec.differences(doc)
    if diffs:
        return ("exists, differs: " + "; ".join(f"{d.key} ({d.have}, the plan asks {d.want})"
                                               for d in diffs) + "; the plan refuses it")
    return "exists, matches"


def owner(plan) -> str:
    """What a datastore a plan made records as its maker (``made_by``)."""
    return f"plan {plan.name}"


def ensure(spec, on_step=lambda s: None, made_by: str | None = None) -> str:
    """Make the datastore (its record naming ``made_by``), make it again (a fault changed it),
    or check that the one there has what the plan asks; what was done: "made", "made again
    (why)" or "reused"."""
    from ..datastores import service
    doc = _record(spec)
    if doc is None:
        service.update(service.create(spec, on_step=on_step), made_by=made_by)
        return "made"
    why = why_restore(spec, doc)
    if why is not None:
        restore(spec, on_step)
        return f"made again ({why})"
    diffs = spec.differences(doc)
    if diffs:
        raise OltplabError("; ".join(d.text(spec.name) for d in diffs) + ": destroy it "
                           "(oltplab datastore destroy) or name another")
    if not service.mounted(doc):
        raise OltplabError(f"datastore {spec.name!r} exists in "
                           f"{service.folder(spec.name, spec.root)} but is not mounted")
    return "reused"


def restore(spec, on_step=lambda s: None) -> None:
    """Destroy the datastore and make it as the spec asks (nothing may use its mount)."""
    from ..datastores import service
    maker = (_record(spec) or {}).get("made_by")  # a datastore made again keeps its maker
    on_step("destroying it")
    service.destroy(spec.name, spec.root, on_step=on_step)
    service.update(service.create(spec, on_step=on_step), made_by=maker)


def mark_altering(spec, events) -> list[str]:
    """Before a run with faults that change the datastore: its record says so (``altered``),
    so that any later run on it finds it made again; those faults' texts."""
    from ..datastores import service
    texts = altering(events)
    doc = _record(spec) if texts else None
    if doc is not None:
        service.update(doc, altered=list(dict.fromkeys([*doc.get("altered", []), *texts])))
    return texts


def check_at_start(spec) -> None:
    """A run on the datastore starts only on the datastore the plan asks: OltplabError
    naming the difference ("datastore 'r1' has 2 devices, the cell asks for 3")."""
    doc = _record(spec)
    if doc is None:
        raise OltplabError(f"datastore {spec.name!r} is gone")
    diffs = spec.differences(doc)
    if diffs:
        raise OltplabError("; ".join(d.text(spec.name, "the cell asks for") for d in diffs))
    if doc.get("altered"):
        raise OltplabError(f"datastore {spec.name!r} was changed by --inject "
                           f"{', '.join(doc['altered'])} and not made again")


def release(spec, made_by: str) -> str:
    """Destroy the datastore at the plan's end when ``made_by`` made it; one the plan found
    (the user's, or another plan's) is never destroyed. What was done, in words."""
    from ..datastores import service
    doc = _record(spec)
    if doc is None:
        return "gone already"
    if doc.get("made_by") != made_by:
        return (f"kept: {made_by} did not make it (made by "
                f"{doc.get('made_by') or 'oltplab datastore create'})")
    service.destroy(spec.name, spec.root)
    return "destroyed"
