"""The ``fisher-fem`` policy: Farokhi & Sandberg's optimal bounded noise (Theorem 2) on an owner-declared 2-D or 3-D
support, designed by finite elements once at start-up, released on identity queries in blocks of d records.

Checked on SQLite and PostgreSQL: the configuration refuses bad supports naming the key; every answer lies in
the support (up to the release grid); the Fisher information the answer states is the library's design and
matches the closed forms of the box (cos² product) and the disc (Bessel J₀); the Fisher budget is charged
max_j (𝓘_w)_jj per release and refuses the release that would cross the floor; the noise drawn is the library
sampler's law (two-sample KS along several directions, α = 1e-6, rejecting a 30 % wrong scale).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")

from scipy import special, stats  # noqa: E402

import privnoise.random as pn_random  # noqa: E402
from privnoise.fisher.fem import solve_dirichlet_eigenproblem  # noqa: E402
from privnoise.fisher.fem_noise import FiniteElementNoise  # noqa: E402
from privnoise.fisher.support_text import parse_support  # noqa: E402
from privnoise.server.config import ConfigError, load_config  # noqa: E402
from privnoise.server.mechanisms import fem_design  # noqa: E402
from tests.server._harness import _fresh_postgres_database  # noqa: E402
from tests.server._lab import DatasetDef, Lab, NoiseSpy  # noqa: E402

KS_ALPHA = 1e-6
TOLERANCE = 1e-4
BOX = "box:-1,-1;1,1"
DISC = "ball:0,0;1"
L_SHAPE = "polygon:0,0;2,0;2,1;1,1;1,2;0,2"
#: The L-shaped polygon as a union of two boxes (for the membership of a grid-rounded point).
L_BOXES = (((0.0, 0.0), (2.0, 1.0)), ((0.0, 0.0), (1.0, 2.0)))
BOUNDS = (-5.0, 7.0)


def _policy(support: str, *, tolerance: float | None = TOLERANCE) -> str:
    lines = ["[policies.identity]", 'mechanism = "fisher-fem"', f'support = "{support}"']
    if tolerance is not None:
        lines.append(f"tolerance = {tolerance!r}")
    return "\n".join(lines)


def _dataset(name: str, support: str, records: int, floor: float = 1e-12) -> DatasetDef:
    rows = [{"x": float((3 * i) % 13 - 5), "region": "north"} for i in range(records)]
    return DatasetDef(name, rows, {"x": BOUNDS}, _policy(support), "fisher-fem", fisher_floor={"x": floor})


@functools.cache
def _design(support: str) -> FiniteElementNoise:
    """The library's own design, solved here independently of the server's cached one (compared to the solver's
    tolerance, not bit for bit)."""
    return FiniteElementNoise(
        solution=solve_dirichlet_eigenproblem(parse_support(support, "W"), rtol=TOLERANCE)
    )


def _max_diagonal(support: str) -> float:
    """max_j (𝓘_w)_jj of the server's design (the per-record charge of one release)."""
    return float(np.max(np.diag(np.asarray(fem_design(support, TOLERANCE).fisher_information()))))


# --- configuration -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "key", "rule"),
    [
        (_policy("disc:0,0;1"), "policies.identity.support", "kind must be one of box, polygon"),
        (_policy("polygon:0,0;1,1;2,2"), "policies.identity.support", "must enclose a positive area"),
        (_policy("box:1,1;0,0"), "policies.identity.support", "must be > `lower`"),
        (_policy("box:0;1"), "policies.identity.support", "2 or 3-dimensional"),
        (_policy("ellipse:0,0;1,2,2,1"), "policies.identity.support", "positive definite"),
        (_policy("ball:0,0;x"), "policies.identity.support", "must be numbers"),
        (
            '[policies.identity]\nmechanism = "fisher-fem"\nsupport = 3',
            "policies.identity.support",
            "KIND:POINTS",
        ),
        ('[policies.identity]\nmechanism = "fisher-fem"', "policies.identity.support", "is required"),
        (_policy(BOX, tolerance=0.5), "policies.identity.tolerance", "must lie in"),
        (_policy(BOX, tolerance=0.0), "policies.identity.tolerance", "must be > 0"),
        (_policy(BOX).replace("identity", "sum"), "policies.sum.mechanism", "answers identity"),
        (
            '[policies.sum]\nmechanism = "fisher-cosine"\nhalf_width = 1.0\nsupport = "box:-1,-1;1,1"',
            "policies.sum.support",
            "is for mechanism 'fisher-fem' only",
        ),
    ],
)
def test_bad_fem_policies_are_refused_naming_the_key(
    tmp_path: Path, policy: str, key: str, rule: str
) -> None:
    d = DatasetDef("d", [{"x": 1.0, "region": "north"}], {"x": BOUNDS}, policy, "fisher-fem")
    path = tmp_path / "owner.toml"
    path.write_text(d.toml(), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert f"`datasets.d.{key}`" in message and rule in message, message


def test_fem_policy_needs_floors_and_an_sql_dataset(tmp_path: Path) -> None:
    d = DatasetDef("d", [{"x": 1.0, "region": "north"}], {"x": BOUNDS}, _policy(BOX), "fisher-fem")
    text = d.toml().replace("fisher_floor = 1e-12\n", "")
    (tmp_path / "owner.toml").write_text(text, encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"`datasets\.d\.policies\.identity`: a Fisher policy needs `fisher_floor`"
    ):
        load_config(tmp_path / "owner.toml")
    text = d.toml().replace('source = "d.csv"', 'source = "d.parquet"\nengine = "dask"')
    (tmp_path / "owner.toml").write_text(text, encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"`datasets\.d\.policies\.identity\.mechanism`: fisher-fem answers"
    ):
        load_config(tmp_path / "owner.toml")


def test_a_good_fem_policy_loads_with_its_support_and_tolerance(tmp_path: Path) -> None:
    d = _dataset("d", L_SHAPE, 4)
    (tmp_path / "owner.toml").write_text(d.toml(), encoding="utf-8")
    policy = load_config(tmp_path / "owner.toml").datasets["d"].policies["identity"]
    assert (policy.mechanism, policy.support, policy.tolerance) == ("fisher-fem", L_SHAPE, TOLERANCE)
    assert policy.is_fisher and not policy.is_scalar_fisher


# --- the server --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def fem_lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    database = "sqlite"
    if request.param == "postgresql":
        database = _fresh_postgres_database(str(request.getfixturevalue("_postgres_url")))
    limit_info = _max_diagonal(BOX)
    datasets = [
        _dataset("fem_box", BOX, 6),
        _dataset("fem_disc", DISC, 6),
        _dataset("fem_l", L_SHAPE, 7),  # odd: the last record takes the first coordinate of a draw
        _dataset("fem_many", L_SHAPE, 4000),
        # the floor allows exactly 2.5 releases' information: two answers, then a refusal
        _dataset("fem_limit", BOX, 6, floor=1.0 / (2.5 * limit_info)),
    ]
    with Lab(tmp_path_factory.mktemp("fem"), datasets, database=database) as lab:
        lab.add_querier("q")
        yield lab


def _answer(lab: Lab, dataset: str) -> dict[str, Any]:
    response = lab.post("q", {"query": f"identity(x) from {dataset}"})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _noise(lab: Lab, dataset: str, body: dict[str, Any]) -> np.ndarray:
    """The noise of an identity answer (the true values are integers, on every grid)."""
    true = np.array([r["x"] for r in lab.datasets[dataset].rows])
    return np.asarray(body["value"]) - true


def _in_boxes(points: np.ndarray, boxes: Any, slack: float) -> np.ndarray:
    inside = np.zeros(points.shape[0], dtype=bool)
    for lo, hi in boxes:
        inside |= np.all((points >= np.array(lo) - slack) & (points <= np.array(hi) + slack), axis=1)
    return inside


def test_answers_lie_in_the_support(fem_lab: Lab) -> None:
    for dataset, check in [
        ("fem_box", lambda w, s: _in_boxes(w, (((-1.0, -1.0), (1.0, 1.0)),), s)),
        ("fem_disc", lambda w, s: np.hypot(w[:, 0], w[:, 1]) <= 1.0 + s * np.sqrt(2.0)),
        ("fem_l", lambda w, s: _in_boxes(w, L_BOXES, s)),
    ]:
        for _ in range(20):
            body = _answer(fem_lab, dataset)
            grid = body["guarantee"]["noise"][0]["grid"]
            assert body["guarantee"]["design"]["block"] == 2
            noise = _noise(fem_lab, dataset, body)
            blocks = noise[: noise.size // 2 * 2].reshape(-1, 2)
            # rounding the noise to the grid moves it by at most half a step per coordinate
            assert check(blocks, grid / 2).all(), (dataset, blocks)
            if noise.size % 2:  # the last record: the first coordinate of a draw from W
                assert -grid / 2 <= noise[-1] <= 2.0 + grid / 2


def test_stated_information_is_the_library_design_and_the_closed_forms(fem_lab: Lab) -> None:
    j01 = float(special.jn_zeros(0, 1)[0])
    closed = {BOX: np.pi**2 * np.eye(2), DISC: 2.0 * j01**2 * np.eye(2)}  # 𝓘 of cos²⊗cos², of J₀(j₀₁r)²
    for dataset, support in [("fem_box", BOX), ("fem_disc", DISC), ("fem_l", L_SHAPE)]:
        with NoiseSpy().installed() as spy:
            body = _answer(fem_lab, dataset)
        ((drawn, _true),) = spy.take()
        served = drawn.mechanism
        assert served is fem_design(support, TOLERANCE)  # designed once, at start-up
        noise = body["guarantee"]["design"]
        assert body["guarantee"]["noise"][0]["family"] == "FiniteElementNoise"
        stated = np.asarray(noise["fisher_information"])
        # what the answer states is the information of the noise it was drawn from
        assert np.array_equal(stated, np.asarray(served.fisher_information()))
        assert noise["eigenvalue"] == served.solution.discrete_eigenvalue
        assert noise["block"] == 2 and noise["support"] == parse_support(support, "W").describe()
        # Tr 𝓘 = 4 λ₁ of the discrete solution (Theorem 2)
        assert np.trace(stated) == pytest.approx(4.0 * noise["eigenvalue"], rel=1e-9)
        charged = body["charged"]["fisher_information"]["x"]
        assert charged == float(np.max(np.diag(stated)))  # slope 1: 𝓘 itself, exactly
        assert body["guarantee"]["per_record_information"]["x"] == charged
        # a second design by the library, solved here: the same to the solver's tolerance
        expected = np.asarray(_design(support).fisher_information())
        np.testing.assert_allclose(stated, expected, rtol=0, atol=20 * TOLERANCE * float(np.trace(expected)))
        if support in closed:
            exact = closed[support]
            # the discrete Rayleigh quotient of a mesh inside W is ≥ λ₁(W): 𝓘 lies just above the closed form
            assert np.trace(stated) >= np.trace(exact) * (1 - 1e-9)
            np.testing.assert_allclose(stated, exact, rtol=0, atol=2e-4 * exact[0, 0])
            # the extrapolated eigenvalue reaches the closed form to the tolerance
            assert served.solution.eigenvalue == pytest.approx(np.trace(exact) / 4, rel=10 * TOLERANCE)


def test_fisher_budget_is_charged_and_refused_at_the_floor(fem_lab: Lab) -> None:
    info = _max_diagonal(BOX)
    before = fem_lab.get("q", "/v1/budget").json()["datasets"]["fem_limit"]["fisher"]["x"]
    assert before["information"] == "0"
    charges = [_answer(fem_lab, "fem_limit")["charged"]["fisher_information"]["x"] for _ in range(2)]
    assert charges[0] == charges[1] == info
    refused = fem_lab.post("q", {"query": "identity(x) from fem_limit"})
    assert refused.status_code == 429 and refused.json()["error"] == "budget exceeded"
    after = fem_lab.get("q", "/v1/budget").json()["datasets"]["fem_limit"]["fisher"]["x"]
    assert float(after["record_bound"]) == pytest.approx(1.0 / (2.0 * charges[0]), rel=1e-12)
    assert fem_lab.post("q", {"query": "identity(x) from fem_limit"}).status_code == 429


def test_answers_follow_the_library_sampler(fem_lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    seeded = pn_random.default_rng(20261122)
    original = pn_random.default_rng
    monkeypatch.setattr(pn_random, "default_rng", lambda rng=None: seeded if rng is None else original(rng))
    served = np.concatenate(
        [_noise(fem_lab, "fem_many", _answer(fem_lab, "fem_many")).reshape(-1, 2) for _ in range(10)]
    )
    assert served.shape == (20_000, 2)
    reference = np.asarray(fem_design(L_SHAPE, TOLERANCE).sample(100_000, rng=7))
    centre = reference.mean(axis=0)
    for angle in np.linspace(0.0, np.pi, 4, endpoint=False):
        direction = np.array([np.cos(angle), np.sin(angle)])
        p = stats.ks_2samp(served @ direction, reference @ direction).pvalue
        assert p > KS_ALPHA, (angle, p)
        wrong = centre + 1.3 * (reference - centre)  # the design at a 30 % wrong scale
        p_wrong = stats.ks_2samp(served @ direction, wrong @ direction).pvalue
        assert p_wrong < KS_ALPHA, (angle, p_wrong)
