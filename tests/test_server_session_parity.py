"""The same question asked of the query server and of a Session with the server's neighbours gets the same release.

A Session with ``neighbours="replaced"`` protects one row added, removed or replaced — the server's neighbours. On
the same rows, with the same ε per query, every query kind must state the same guarantee (ε, δ and the adjacency in
the same words) and charge exactly the same; each noisy component must have the same sensitivity (the server's is
read from the noise it actually drew, through a spy) and the same noise: one calibration
(:mod:`privnoise.dp.snapped`: the family's smallest scale within the share, the exact sum snapped to the grid), so
the same family and the same scale to the last bit, and counts on ℤ (discrete Laplace) in both. The released values
follow the same law: a two-sample KS test at α = 1e-6 between the server's own release function and the Session's
calibrated component, on 40,000 draws each, for sums, plain and grouped, and for counts, which rejects the
Session's noise at 1.3× its scale (the power check).

A variance releases the same three components; the Session states the population variance S₂/N − (S₁/N)², the
server the sample variance (N/(N − 1) of it), both post-processing of the same noisy sums.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
from privnoise.core import RecordReplaced

pytest.importorskip("fastapi")

from privnoise.dp import DiscreteLaplace  # noqa: E402
from privnoise.dp.families import FAMILIES  # noqa: E402
from privnoise.planning import calibrate  # noqa: E402
from tests.server._lab import DatasetDef, Lab, NoiseSpy  # noqa: E402

ALPHA = 1e-6
DRAWS = 40_000
REGIONS = ("north", "south", "east")
BOUNDS = (10.0, 60.0)
ROWS = [{"x": float((i * 7) % 50) + 10.0, "region": REGIONS[i % 3]} for i in range(240)]
POLICIES = """
[policies.count]
mechanism = "laplace"
epsilon = "1/10"
[policies.sum]
mechanism = "laplace"
epsilon = "1/10"
[policies.mean]
mechanism = "laplace"
epsilon = "1/5"
[policies.variance]
mechanism = "laplace"
epsilon = "3/10"
[policies.histogram]
mechanism = "laplace"
epsilon = "1/10"
[policies.quantile]
mechanism = "exponential"
epsilon = "1/2"
"""

#: query text → (the Session's call, its ε, whether the components' sensitivities agree)
CASES: dict[str, tuple[Any, Fraction, bool]] = {
    "count() from m": (lambda s: s.count(epsilon=0.1), Fraction(1, 10), True),
    "sum(x) from m": (lambda s: s.sum("x", bounds=BOUNDS, epsilon=0.1), Fraction(1, 10), True),
    "histogram(region) from m": (lambda s: s.histogram("region", categories=REGIONS, epsilon=0.1),
                                 Fraction(1, 10), True),
    "count() from m group by region": (lambda s: s.group_by("region", keys=REGIONS).count(epsilon=0.1),
                                       Fraction(1, 10), True),
    "sum(x) from m group by region": (lambda s: s.group_by("region", keys=REGIONS).sum("x", bounds=BOUNDS,
                                                                                      epsilon=0.1),
                                      Fraction(1, 10), True),
    "mean(x) from m": (lambda s: s.mean("x", bounds=BOUNDS, epsilon=0.2), Fraction(1, 5), True),
    "variance(x) from m": (lambda s: s.variance("x", bounds=BOUNDS, epsilon=0.3), Fraction(3, 10), True),
    "mean(x) from m group by region": (lambda s: s.group_by("region", keys=REGIONS).mean("x", bounds=BOUNDS,
                                                                                         epsilon=0.2),
                                       Fraction(1, 5), True),
}
#: the server's component names, in the Session's words
NAMES = {"sum_of_squares": "sum of squares", "count": "count", "sum": "sum"}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    dataset = DatasetDef("m", ROWS, {"x": BOUNDS}, POLICIES, "laplace", categories=REGIONS,
                         step_queries={"x": "allow"})
    with Lab(Path(tmp_path_factory.mktemp("parity")), [dataset]) as lab:
        lab.add_querier("q", epsilon="1000", delta="1/100000")
        yield lab


def _session() -> pn.Session:
    data = {"x": np.array([r["x"] for r in ROWS]), "region": np.array([r["region"] for r in ROWS])}
    return pn.Session(data, neighbours="replaced", epsilon=100.0, rng=5)


def _server(lab: Lab, text: str) -> tuple[dict[str, Any], list[Any]]:
    spy = NoiseSpy()
    with spy.installed():
        response = lab.post("q", {"query": text})
    assert response.status_code == 200, response.text
    return response.json(), spy.take()


@pytest.mark.parametrize("text", list(CASES))
def test_the_server_and_the_session_state_and_charge_the_same(lab: Lab, text: str) -> None:
    call, epsilon, _ = CASES[text]
    body, _ = _server(lab, text)
    s = _session()
    before = s.remaining().exact_epsilon
    release = call(s)
    assert Fraction(body["charged"]["epsilon"]) == before - s.remaining().exact_epsilon == epsilon
    assert Fraction(body["charged"]["delta"]) == 0 and release.guarantee.delta == 0.0
    stated = release.guarantee.as_dict()
    assert body["guarantee"]["epsilon"] == release.guarantee.epsilon == float(epsilon)
    assert body["guarantee"]["adjacency"] == stated["adjacency"] == RecordReplaced().describe()


@pytest.mark.parametrize("text", [t for t, case in CASES.items() if case[2]])
def test_each_component_has_the_same_sensitivity_family_and_scale(lab: Lab, text: str) -> None:
    call, _, _ = CASES[text]
    _, drawn = _server(lab, text)
    release = call(_session())
    assert len(drawn) == len(release.noise)
    session = {n["name"]: n for n in release.noise}
    names = _server_names(text)
    for (noise, _), name in zip(drawn, names, strict=True):
        described = session[NAMES[name]] if len(session) > 1 else release.noise[0]  # a histogram's "cells"
        assert noise.sensitivity == pytest.approx(described["sensitivity"], rel=1e-12)
        server_scale = float(np.max(noise.mechanism.scale))
        session_scale = float(described.get("b", described.get("t")))
        assert described["family"] in ("laplace", "discrete-laplace")
        assert server_scale == session_scale  # one calibration
        assert isinstance(noise.mechanism, DiscreteLaplace) == (described["family"] == "discrete-laplace")


def _server_names(text: str) -> list[str]:
    """The server's components in its order (the planner's documented order)."""
    if text.startswith("variance"):
        return ["sum", "sum_of_squares", "count"]
    if text.startswith("mean"):
        return ["sum", "count"]
    return ["count"] if text.startswith(("count", "histogram")) else ["sum"]


@pytest.mark.parametrize("text, name", [("sum(x) from m", "sum"), ("sum(x) from m group by region", "sum"),
                                        ("mean(x) from m", "sum"), ("count() from m", "count"),
                                        ("count() from m group by region", "count")])
def test_sums_and_counts_released_by_the_server_and_the_session_follow_one_law(lab: Lab, text: str, name: str) -> None:
    call, epsilon, _ = CASES[text]
    _, drawn = _server(lab, text)
    noise, truth = drawn[0]  # the sum is the first component
    release = call(_session())
    (described,) = [n for n in release.noise if n["name"] == name]
    share = epsilon / len(release.noise)  # the query's ε split evenly over its components, as on the server
    count = name == "count"
    component = calibrate(name, FAMILIES["laplace"], described["sensitivity"], share, integer=count, discrete=count)
    assert component.describe() == described  # the Session's own component
    centre = float(np.ravel(truth)[0])
    generator = np.random.default_rng(17)
    server = np.asarray(noise.release(np.full(DRAWS, centre), rng=generator)) - centre
    session = component.add(np.full(DRAWS, centre), generator) - centre
    assert stats.ks_2samp(server, session).pvalue >= ALPHA
    wider = calibrate(name, FAMILIES["laplace"], 1.3 * described["sensitivity"], share)
    assert stats.ks_2samp(server, wider.add(np.full(DRAWS, centre), generator) - centre).pvalue < ALPHA


def test_quantiles_use_one_mechanism_with_one_grid_budget_and_score_sensitivity(lab: Lab) -> None:
    body, _ = _server(lab, "quantile(x, 0.5) from m")
    release = _session().quantile("x", 0.5, bounds=BOUNDS, epsilon=0.5)
    mechanism = body["guarantee"]["mechanism"]
    assert mechanism["grid"] == release.query["grid"]
    assert mechanism["epsilon_each"] == release.query["epsilon_each"] == 0.5
    assert mechanism["score_sensitivity"] == RecordReplaced().quantile_score(0.5) == 1.0
    assert body["guarantee"]["epsilon"] == release.guarantee.epsilon == 0.5
