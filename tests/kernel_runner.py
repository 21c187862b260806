"""Run notebooks with nbclient through a kernel client that waits in one-second slices.

``python kernel_runner.py A.ipynb B.ipynb ...`` executes each notebook in turn (it needs only
nbformat, nbclient and ipykernel, so it runs in the plain-install environment of
``tests/test_outside_repo.py``) and prints one line per notebook, then the number of late
messages.

Why the slices: through nbclient's asyncio client (jupyter_client 8.10, pyzmq 27.3) a
kernel's reply can arrive without waking the wait for it. The wait then lasts until its
timeout, nbclient's cell timeout (900 s here), whose final check of the socket finds the
reply: no error, just a stall. Measured with ``tests/benchmarks/bench_kernel_wait.py``: in
150 cells that each open an explorer's widgets, 2 to 18 such stalls, with ipykernel 6.31 and
7.4 alike; none in cells that only print and plot. :class:`SlicedChannel` ends every wait
after a second with that same check, so a missed wake-up costs at most a second. A message
found only by that check is counted in :data:`late`.
"""

from __future__ import annotations

import sys
import time
from queue import Empty
from typing import Any

import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from nbclient import NotebookClient
from traitlets import Type
from traitlets.config import Config

#: Seconds of one wait; each ends with a check of the socket.
SLICE = 1.0
#: Messages found only by the check at the end of a slice (a missed wake-up, or a message
#: that arrived just then), over this process.
late = 0


class SlicedChannel(AsyncZMQSocketChannel):
    """A kernel channel whose ``get_msg`` waits in slices of :data:`SLICE` seconds."""

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:
        global late
        assert self.socket is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = SLICE if deadline is None else deadline - time.monotonic()
            start = time.monotonic()
            if await self.socket.poll(max(1, int(min(SLICE, left) * 1000))):
                late += time.monotonic() - start >= SLICE
                return await self._recv()
            if deadline is not None and time.monotonic() >= deadline:
                raise Empty


class SlicedClient(AsyncKernelClient):
    """nbclient's kernel client with :class:`SlicedChannel` for every message channel."""

    shell_channel_class = Type(SlicedChannel)  # type: ignore[assignment]
    iopub_channel_class = Type(SlicedChannel)  # type: ignore[assignment]
    stdin_channel_class = Type(SlicedChannel)  # type: ignore[assignment]
    control_channel_class = Type(SlicedChannel)  # type: ignore[assignment]


def sliced_config() -> Config:
    """Configuration that makes nbclient's kernel manager hand out :class:`SlicedClient`."""
    name = f"{SlicedClient.__module__}.{SlicedClient.__qualname__}"
    return Config({"AsyncKernelManager": {"client_class": name}})


def main(paths: list[str]) -> None:
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        start = time.monotonic()
        NotebookClient(nb, timeout=900, startup_timeout=300, kernel_name="python3",
                       config=sliced_config(),
                       resources={"metadata": {"path": "."}}).execute()
        print("ran", path, len(nb.cells), "cells in", round(time.monotonic() - start), "s")
    print("late messages:", late)


if __name__ == "__main__":
    main(sys.argv[1:])
