"""The headline figures of a run, one line, for listings such as ``oltplab results list``: each
kind says its own (``RunKind.headline``); a run of no known kind, or without measured steps,
gives "-"."""

from __future__ import annotations


def headline(run: dict) -> str:
    from .. import kinds
    kind = kinds.find(run.get("kind"))
    return kind.headline(run) if kind is not None else "-"
