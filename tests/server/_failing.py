"""A custom mechanism factory whose noise fails when sampled: the hook of the failure tests (SECURITY.md 9).

The owner's ``mechanism = "custom"`` calls ``build(policy)``; the mechanism raises from ``_sample`` with a
message that would leak a secret if the server ever echoed it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privnoise.mechanisms import Gaussian


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class FailingGaussian(Gaussian):
    def _sample(self, n: int, generator: np.random.Generator) -> Any:
        raise RuntimeError("mechanism failed; SECRET-DETAIL-THAT-MUST-NOT-LEAK")


def build(_policy: Any) -> FailingGaussian:
    return FailingGaussian(cov=1.0)
