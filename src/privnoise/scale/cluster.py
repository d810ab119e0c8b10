"""Connecting to a Dask scheduler: ``"local"`` starts a ``LocalCluster`` on this machine, an address joins one.

``scheduler`` is what the command line's ``--scheduler`` and the server's ``scheduler =`` take:

* ``"local"`` — a ``LocalCluster`` of worker processes on loopback, dashboard off, closed with the connection;
* ``"tcp://host:8786"`` (or ``tls://…``) — the scheduler of a running cluster (``dask scheduler`` and
  ``dask worker`` processes, a Kubernetes or job-queue deployment: see the Dask guide, docs/guides/dask.md).

>>> check_scheduler("tcp://10.0.0.5:8786", "scheduler", "owner.toml")
'tcp://10.0.0.5:8786'
>>> check_scheduler("http://x", "--scheduler", "privnoise release")
Traceback (most recent call last):
...
privnoise.exceptions.InvalidParameterError: `--scheduler` of `privnoise release` must be 'local' or a scheduler address tcp://HOST:PORT (or tls://); got 'http://x'.
"""

from __future__ import annotations

import re
from types import TracebackType
from typing import Any

from .._optional import require
from ..exceptions import InvalidParameterError

__all__ = ["Connection", "check_scheduler", "connect"]

_ADDRESS = re.compile(r"^(tcp|tls)://[A-Za-z0-9_.\-\[\]:]+:\d{1,5}$")


def check_scheduler(scheduler: Any, name: str, owner: str) -> str:
    """``scheduler`` when it is ``"local"`` or ``tcp://HOST:PORT`` / ``tls://HOST:PORT``; an error otherwise."""
    if isinstance(scheduler, str) and (scheduler == "local" or _ADDRESS.match(scheduler)):
        return scheduler
    raise InvalidParameterError(
        f"`{name}` of `{owner}` must be 'local' or a scheduler address tcp://HOST:PORT (or tls://); got {scheduler!r}."
    )


class Connection:
    """A ``distributed.Client`` (and the ``LocalCluster`` it started, for ``"local"``); closes both on exit."""

    def __init__(self, client: Any, cluster: Any = None) -> None:
        self.client = client
        self.cluster = cluster

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()


def connect(scheduler: str, *, workers: int | None = None, owner: str = "connect", set_as_default: bool = True) -> Connection:
    """A client of ``scheduler`` (module docstring); ``workers`` worker processes for ``"local"`` (Dask's default:
    one per core group)."""
    chosen = check_scheduler(scheduler, "scheduler", owner)
    distributed = require("distributed", feature="Dask clusters")
    if chosen == "local":
        # No dashboard; the scheduler's own HTTP endpoints (health, metrics) on a free loopback port, not 8787.
        cluster = distributed.LocalCluster(n_workers=workers, processes=True, host="127.0.0.1",
                                           dashboard_address=None,
                                           scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
        try:
            return Connection(distributed.Client(cluster, set_as_default=set_as_default), cluster)
        except BaseException:
            cluster.close()
            raise
    return Connection(distributed.Client(chosen, set_as_default=set_as_default))
