"""A plan's datastores (``[datastores.NAME]``): each is made before the first cell whose data
lives on it and destroyed after the last (``keep = true`` keeps it). One that exists already,
made with the same policy on the same devices (a kept one, or one an interrupted plan left for
``--resume``), is used as it is; one made otherwise is refused for its cells. An interrupted or
failed plan leaves its datastores, so that ``plan run --resume`` finds them; ``datastore
destroy`` removes them.
"""

from __future__ import annotations

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


def ensure(spec, on_step=lambda s: None) -> str:
    """Make the datastore, or check that the one there is the plan's; "made" or "reused"."""
    from ..datastores import service
    home = service.folder(spec.name, spec.root)
    if not (home / "datastore.json").exists():
        service.create(spec, on_step=on_step)
        return "made"
    doc = service.load(spec.name, spec.root)
    given = {"devices": [str(d) for d in spec.devices]} if spec.devices else {
        "loop": {"count": spec.loop_count, "bytes": spec.loop_bytes}}
    had = {"devices": doc.get("removed", []) + doc["devices"]} if spec.devices else {
        "loop": doc["loop"]}
    if doc["asked"] != spec.policy() or given != had:
        raise OltplabError(f"datastore {spec.name!r} exists in {home} made otherwise than the "
                           "plan's; destroy it (oltplab datastore destroy) or name another")
    if not service.mounted(doc):
        raise OltplabError(f"datastore {spec.name!r} exists in {home} but is not mounted")
    return "reused"


def release(spec) -> None:
    from ..datastores import service
    if (service.folder(spec.name, spec.root) / "datastore.json").exists():
        service.destroy(spec.name, spec.root)
