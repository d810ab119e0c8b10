"""The data and question shared by ``bench_analyst.py`` and its peers (``analyst_peers.py``): the ε, the value
bounds, the per-unit cap k, the declared keys and the 20 histogram bins of the floor table."""

from __future__ import annotations

import numpy as np

EPSILON = 1.0
BOUNDS = (0.0, 10.0)
FLOOR_K = 3
FLOOR_KEYS = [0, 1, 2, 3]
FLOOR_EDGES = list(np.linspace(*BOUNDS, 21))  # 20 bins over the bounds
