"""What each Session release carries besides its value, checked against the data and closed forms: the query record,
integer counts clamped at 0 only when negative, intervals cut to the values' possible range, histogram bins with
values beyond the edges counted in the first and last bins, centred sums for variances (the sensitivity k·h² of
Σ(x − c)² holds only for centred values), quantile levels one or many, top-k of every candidate, and every draw
from the session's own generator (a seeded session replays all of its releases)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privnoise as pn
from privnoise.analysis.backend import InMemoryBackend


def _frame(seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    kwh = rng.uniform(-1.0, 11.0, 600)  # some values beyond the bounds (0, 10) on both sides
    kwh[::50] = np.nan
    return pd.DataFrame({"unit": np.arange(600) // 2, "kwh": kwh,
                         "region": rng.choice(np.array(["east", "north", "south"], dtype=object), 600)})


def _session(epsilon: float = 1e7, seed: int = 1, **kwargs) -> pn.Session:
    kwargs.setdefault("missing", "drop")
    return pn.Session(_frame(), privacy_unit="unit", max_contributions=2, epsilon=epsilon, rng=seed, **kwargs)


def _releases(s: pn.Session) -> list:
    return [
        s.count(epsilon=1.0), s.count("kwh", epsilon=1.0), s.sum("kwh", bounds=(0.0, 10.0), epsilon=1.0),
        s.mean("kwh", bounds=(0.0, 10.0), epsilon=1.0), s.variance("kwh", bounds=(0.0, 10.0), epsilon=1.0),
        s.histogram("kwh", bins=[0.0, 2.5, 5.0, 10.0], epsilon=1.0),
        s.histogram("region", categories=["east", "north", "west"], epsilon=1.0),
        s.quantile("kwh", [0.25, 0.5], bounds=(0.0, 10.0), epsilon=1.0, resolution=64),
        s.top_k("region", candidates=["east", "north", "south"], k=2, epsilon=1.0),
    ]


def test_a_seeded_session_replays_every_release_and_another_seed_does_not() -> None:
    a, b = _releases(_session(epsilon=20.0, seed=3)), _releases(_session(epsilon=20.0, seed=3))
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(np.asarray(x.value, dtype=object), np.asarray(y.value, dtype=object))
    c = _releases(_session(epsilon=20.0, seed=4))
    differ = [not np.array_equal(np.asarray(x.value, dtype=object), np.asarray(z.value, dtype=object))
              for x, z in zip(a, c, strict=True)]
    assert all(differ[2:8])  # integer counts and the top-2 of three regions may well agree


def test_counts_with_a_column_drop_its_missing_values() -> None:
    frame = _frame()
    s = _session()
    assert s.count(epsilon=1e6).value == len(frame)
    assert s.count("kwh", epsilon=1e6).value == int(frame["kwh"].notna().sum())
    record = s.count("kwh", epsilon=1.0).query
    assert record["column"] == "kwh" and record["query"] == "count"


def test_counts_are_integers_clamped_at_zero_only_when_negative() -> None:
    empty = pn.Session({"x": np.zeros(0)}, epsilon=1e6, rng=1).count(epsilon=1e5)
    assert empty.value == 0 and type(empty.value) is int and empty.clamped is False
    assert empty.confidence_interval(0.95)[0] == 0.0
    seen = set()
    for seed in range(16):
        est = pn.Session({"x": np.zeros(0)}, epsilon=1.0, rng=seed).count(epsilon=0.1)
        assert type(est.value) is int and est.value >= 0 and type(est.clamped) is bool
        assert est.confidence_interval(0.95)[0] == 0.0 or not est.clamped
        seen.add(est.clamped)
        if est.clamped:
            assert est.value == 0
    assert seen == {True, False}


def test_sums_are_cut_to_their_sign() -> None:
    for bounds, cut in (((0.0, 10.0), "low"), ((0.5, 10.0), "low"), ((-10.0, 0.0), "high"), ((-10.0, -0.5), "high"),
                        ((-1.0, 10.0), None)):
        values, lows, highs = [], [], []
        for seed in range(8):
            est = pn.Session({"x": np.zeros(3)}, epsilon=1.0, rng=seed).sum("x", bounds=bounds, epsilon=0.05)
            low, high = est.confidence_interval(0.95)
            values.append(est.value)
            lows.append(low)
            highs.append(high)
            assert est.clamped == (est.value == 0.0 and cut is not None)
            assert est.query["bounds"] == list(bounds) and est.query["column"] == "x"
        if cut == "low":
            assert min(values) == 0.0 and min(lows) == 0.0 and max(highs) > 0.0
        elif cut == "high":
            assert max(values) == 0.0 and max(highs) == 0.0 and min(lows) < 0.0
        else:
            assert min(values) < 0.0 < max(values) and min(lows) < 0.0 < max(highs)


def test_histogram_bins_count_values_beyond_the_edges_in_the_first_and_last_bins() -> None:
    frame = _frame()
    x = frame["kwh"].dropna().clip(0.0, 10.0).to_numpy()
    est = _session().histogram("kwh", bins=[0.0, 2.5, 5.0, 10.0], epsilon=1e6)
    expected = np.histogram(x, bins=[0.0, 2.5, 5.0, 10.0])[0]
    assert list(est.value) == list(expected)
    assert est.keys == ["[0, 2.5)", "[2.5, 5)", "[5, 10)"] and est.query["bins"] == est.keys
    assert est.query["column"] == "kwh" and list(est.clamped) == [False] * 3
    cats = _session().histogram("region", categories=["east", "north", "west"], epsilon=1e6)
    counts = frame["region"].value_counts()
    assert list(cats.value) == [counts["east"], counts["north"], 0] and cats.keys == ["east", "north", "west"]
    assert cats.confidence_interval(0.95)[0][2] == 0.0
    for seed in range(6):
        noisy = _session(epsilon=1.0, seed=seed).histogram("region", categories=["west"], epsilon=0.1)
        clamped = np.asarray(noisy.clamped)
        assert clamped.dtype == bool and np.all(np.asarray(noisy.value)[clamped] == 0.0)


def test_variances_and_means_sum_centred_values(monkeypatch: pytest.MonkeyPatch) -> None:
    requests = []
    original = InMemoryBackend.aggregate

    def spy(self, request, rng):
        requests.append(request)
        return original(self, request, rng)

    monkeypatch.setattr(InMemoryBackend, "aggregate", spy)
    s = _session()
    s.variance("kwh", bounds=(2.0, 10.0), epsilon=1.0)
    s.mean("kwh", bounds=(2.0, 10.0), epsilon=1.0)
    assert [r.centre for r in requests] == [6.0, 6.0]
    assert all(r.bounds == (2.0, 10.0) for r in requests)


def test_the_variance_noise_is_calibrated_to_the_centred_ranges() -> None:
    # bounds (0, 10): h = 5, so Σ(x − c) moves by k·h = 10 and Σ(x − c)² by k·h² = 50 (not 2h); a third of ε each
    est = _session().variance("kwh", bounds=(0.0, 10.0), epsilon=0.3)
    scales = {n["name"]: n["b"] for n in est.noise}
    assert scales["count"] == pytest.approx(2 / 0.1, rel=1e-3) or "t" in est.noise[0]
    assert scales["sum"] == pytest.approx(10 / 0.1, rel=1e-3)
    assert scales["sum of squares"] == pytest.approx(50 / 0.1, rel=1e-3)
    assert est.query["bounds"] == [0.0, 10.0] and est.query["column"] == "kwh"


def test_quantiles_of_one_level_are_numbers_and_of_several_arrays() -> None:
    s = _session()
    one = s.quantile("kwh", 0.5, bounds=(0.0, 10.0), epsilon=1e3, resolution=2)
    assert isinstance(one.value, float)
    many = s.quantile("kwh", [0.25, 0.75], bounds=(0.0, 10.0), epsilon=1e3, resolution=64)
    assert isinstance(many.value, np.ndarray) and many.value.shape == (2,)
    assert many.query["q"] == [0.25, 0.75] and many.query["bounds"] == [0.0, 10.0]
    assert many.query["column"] == "kwh" and many.query["grid"] == 2.0 ** np.floor(np.log2(10.0 / 64))
    assert many.query["epsilon_each"] == pytest.approx(1e3 / 2)
    from privnoise.analysis.estimate import RANK

    assert many.meaning == RANK and one.meaning == RANK
    with pytest.raises(pn.exceptions.InvalidParameterError, match="resolution"):
        s.quantile("kwh", 0.5, bounds=(0.0, 10.0), epsilon=1.0, resolution=1)


def test_top_k_may_pick_every_candidate() -> None:
    est = _session().top_k("region", candidates=["east", "north", "south"], k=3, epsilon=1e3)
    assert sorted(est.value) == ["east", "north", "south"]
    assert est.query["k"] == 3 and est.query["method"] == "exponential" and est.query["column"] == "region"


def test_every_release_names_its_query() -> None:
    labels = [r.query["query"] for r in _releases(_session(epsilon=20.0))]
    assert labels == ["count", "count", "sum", "mean", "variance", "histogram", "histogram", "quantile", "top_k"]


def test_scalar_queries_on_dask_are_the_in_memory_ones() -> None:
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    frame = _frame().dropna()
    with dask.config.set(scheduler="sync"):
        for make in (lambda d: pn.Session(d, privacy_unit="unit", max_contributions=2, epsilon=1e7, rng=5),):
            a, b = make(frame), make(dd.from_pandas(frame, npartitions=3))
            for query in (lambda s: s.count(epsilon=1e6), lambda s: s.sum("kwh", bounds=(0.0, 10.0), epsilon=1e6),
                          lambda s: s.mean("kwh", bounds=(0.0, 10.0), epsilon=1e6),
                          lambda s: s.variance("kwh", bounds=(0.0, 10.0), epsilon=1e6)):
                x, y = query(a), query(b)
                assert float(y.value) == pytest.approx(float(x.value), rel=1e-6, abs=1e-3)
    clipped = frame["kwh"].clip(0.0, 10.0)
    assert float(y.value) == pytest.approx(float(clipped.var(ddof=0)), rel=1e-3)


@pytest.mark.parametrize("accountant", ["zcdp", "rdp"])
def test_gaussian_family_counts_and_cells_are_integers_with_integer_intervals(accountant: str) -> None:
    # counts are released as integers (the Gaussian noise rounded): their intervals are j rows either side, j an
    # integer, with the exact coverage of the rounded law
    for seed in range(4):
        s = _session(epsilon=5.0, seed=seed, accountant=accountant, delta=1e-6)
        for est in (s.count(epsilon=0.5), s.histogram("region", categories=["east", "north"], epsilon=0.5)):
            low, high = (np.atleast_1d(np.asarray(v, dtype=float)) for v in est.confidence_interval(0.95))
            assert np.all(low == np.round(low)) and np.all(high == np.round(high))
            assert np.all(est.coverage(0.95) >= 0.95)
