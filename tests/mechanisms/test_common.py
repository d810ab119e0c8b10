"""Behaviour every mechanism shares: sample shapes and the validation of ``size``."""

from __future__ import annotations

import numpy as np
import pytest

from privnoise.exceptions import InvalidParameterError
from privnoise.mechanisms import Gaussian, Laplace, RaisedCosine

MECHANISMS = {
    "raised-cosine": (
        RaisedCosine(lower=0.3, upper=1.7),
        RaisedCosine(lower=[0.0, -1.0, 2.0], upper=[1.0, 2.0, 2.5]),
    ),
    "gaussian": (Gaussian(cov=2.0), Gaussian(cov=[[2.0, 0.5], [0.5, 1.0]])),
    "laplace": (Laplace(scale=2.0), Laplace(scale=[0.5, 1.0, 3.0])),
}


@pytest.mark.parametrize("family", sorted(MECHANISMS))
@pytest.mark.parametrize(
    ("size", "leading"),
    [
        (None, ()),
        (1, (1,)),
        (5, (5,)),
        (np.int64(4), (4,)),
        ((2, 3), (2, 3)),
        ((), ()),
        (0, (0,)),
        ((3, 0), (3, 0)),
    ],
)
def test_sample_shapes(family, size, leading) -> None:
    scalar, vector = MECHANISMS[family]
    draws = scalar.sample(size, rng=1)
    if leading == ():
        assert isinstance(draws, float)
    else:
        assert isinstance(draws, np.ndarray) and draws.shape == leading and draws.dtype == np.float64
    out = vector.sample(size, rng=1)
    assert isinstance(out, np.ndarray) and out.shape == leading + vector.shape


@pytest.mark.parametrize("family", sorted(MECHANISMS))
@pytest.mark.parametrize("size", [-1, 1.5, "3", (2, -1), (2, 1.5), [2], True, np.float64(2.0)])
def test_bad_size_is_rejected(family, size) -> None:
    for mech in MECHANISMS[family]:
        with pytest.raises(InvalidParameterError, match="`size`"):
            mech.sample(size, rng=1)
