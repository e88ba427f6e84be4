"""Import a given build of the C extension as ``oltplab._native`` (in a child process, before
anything else imports it): the sanitized build, or the module of the parent's interpreter."""

from __future__ import annotations

import importlib.util
import sys


def use(path: str):
    spec = importlib.util.spec_from_file_location("oltplab._native", path)
    native = importlib.util.module_from_spec(spec)
    sys.modules["oltplab._native"] = native
    spec.loader.exec_module(native)
    import oltplab

    oltplab._native = native
    return native
