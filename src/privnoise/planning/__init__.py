"""The core every interface builds on: a query is a :class:`Plan` of noisy :class:`Component` s, released by
:func:`execute` into one :class:`~privnoise.Release`.

:mod:`~privnoise.planning.component`
    One released aggregate and its calibrated noise (:func:`calibrate`: the smallest noise of a family whose exact
    share is within a budget).
:mod:`~privnoise.planning.plan`
    The components of a query, the neighbours they are stated for, what the query costs (:class:`Cost`, events an
    accountant composes) and :func:`execute`.
:mod:`~privnoise.planning.accuracy`, :mod:`~privnoise.planning.estimates`
    The error law of a released number (:class:`NoiseLaw`), intervals and the post-processing into values.

The analyst's :class:`~privnoise.Session` builds its plans here, and so does the query server: its answers are
plans of the same :class:`Component` s executed by :func:`execute` (``privnoise.server.plans``); a direct :func:`privnoise.release` states its accuracy with
the same :class:`NoiseLaw`.
"""

from .accuracy import NoiseLaw
from .component import Component, calibrate
from .plan import Cost, Plan, execute, finished, group_plan, split

__all__ = ["Component", "Cost", "NoiseLaw", "Plan", "calibrate", "execute", "finished", "group_plan", "split"]
