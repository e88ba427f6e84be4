"""What a DVD-Store-derived build is asked for: ``DvdsBuildSpec``, validated and frozen at the
edge (the CLI) and handed to an engine's dvds loader."""

from __future__ import annotations

from dataclasses import dataclass

from .sizes import Size


@dataclass(frozen=True)
class DvdsBuildSpec:
    """``size`` (sizes.parse_size); ``build_users`` loading processes; ``seed`` None for a
    random one (the build records the seed it used, so any build can be made again);
    ``force`` drops an existing DVD-Store-derived schema first."""

    size: Size
    build_users: int = 2
    seed: int | None = None
    force: bool = False
