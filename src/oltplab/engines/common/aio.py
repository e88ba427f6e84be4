"""Asynchronous database clients called from synchronous code."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run_sync(make_coro):
    """Run a coroutine from synchronous code, also when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coro())
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make_coro())).result()
