"""``Session.sql`` on a census-like table: answers cover the truth at their stated rate, the charge is the stated
guarantee, each part's noise is calibrated on its share (checked against sensitivities worked out by hand), and
everything that cannot be answered is refused before any charge."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import privnoise as pn
from privnoise.exceptions import BudgetExceededError, InvalidParameterError
from privnoise.sql import SqlError

pd = pytest.importorskip("pandas")
ALPHA = 1e-6


def _census(n: int = 4000, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "person": np.arange(n),
        "age": rng.integers(18, 90, n).astype(float),
        "income": np.round(rng.lognormal(10, 0.6, n), 2),
        "region": rng.choice(["north", "south", "east", "west"], n),
        "sex": rng.choice(["f", "m"], n),
    })


BOUNDS = {"age": (0.0, 100.0), "income": (0.0, 200_000.0)}
#: (dialect, statement, {output: truth from the frame}) — the truth computed by pandas on the same rows
STATEMENTS = [
    ("postgres", "SELECT COUNT(*) AS n, AVG(age) AS mean_age, SUM(income) AS total FROM census WHERE age >= 30",
     lambda f: {"n": (f.age >= 30).sum(), "mean_age": f.age[f.age >= 30].mean(),
                "total": f.income[f.age >= 30].clip(0, 200_000).sum()}),
    ("bigquery", "SELECT region, AVG(income) AS m, COUNT(*) AS n FROM census WHERE sex = 'f' GROUP BY region",
     lambda f: {"m": f[f.sex == "f"].groupby("region").income.mean(), "n": f[f.sex == "f"].groupby("region").size()}),
    ("spark", "SELECT VAR_POP(age) AS v, SUM(age) / COUNT(*) AS ratio FROM census WHERE region IN ('north', 'east')",
     lambda f: {"v": f.age[f.region.isin(["north", "east"])].var(ddof=0),
                "ratio": f.age[f.region.isin(["north", "east"])].mean()}),
]


#: Outputs whose interval comes from the exact law of their noise (counts, sums), not a bound set (ratios, variance).
EXACT = ("n", "total")
#: The widest an interval could be without data (the output's possible range): a real interval is narrower.
RANGES = {"mean_age": 100.0, "m": 200_000.0, "v": 50.0**2, "ratio": 100.0}


def _truth_of(value, key):
    return float(value if np.ndim(value) == 0 else value.loc[key])


@pytest.mark.parametrize(("dialect", "statement", "truth"), STATEMENTS)
def test_answers_cover_the_truth_at_the_stated_rate(dialect: str, statement: str, truth) -> None:
    frame = _census()
    truths = truth(frame)
    covered = {name: [] for name in truths}
    widths = {name: [] for name in truths}
    for seed in range(150):
        s = pn.Session(frame, epsilon=0.5, rng=seed)
        answer = s.sql(statement, epsilon=0.5, bounds=BOUNDS, dialect=dialect,
                       keys=["east", "north", "south", "west"] if "GROUP BY" in statement else None)
        for i, row in enumerate(answer.rows()):
            for name in truths:
                t = _truth_of(truths[name], row.get("region"))
                low, high = (answer.intervals[name][0][i], answer.intervals[name][1][i])
                covered[name].append(low <= t <= high)
                widths[name].append((t, row[name], low, high))
    for name, hits in covered.items():
        m = len(hits)
        # at least 95 % (the intervals are conservative): refuse only below the binomial's α = 1e-6 lower quantile
        assert sum(hits) >= stats.binom.ppf(ALPHA, m, 0.95), (name, sum(hits), m)
        if name in EXACT:  # power: the exact law's intervals, half as wide, miss far more often than 5 %
            narrow = [abs(t - (lo + hi) / 2) <= (hi - lo) / 4 for t, _, lo, hi in widths[name]]
            assert sum(narrow) < stats.binom.ppf(ALPHA, m, 0.95), name
        else:  # a ratio's or variance's interval is a conservative bound set: never vacuous
            assert max(hi - lo for *_, lo, hi in widths[name]) < RANGES[name], name


def test_the_charge_is_the_stated_guarantee_and_each_part_its_share() -> None:
    frame = _census()
    s = pn.Session(frame, epsilon=3, rng=5)
    answer = s.sql("SELECT COUNT(*), SUM(income), AVG(age) FROM census", epsilon=1.5, bounds=BOUNDS)
    assert answer.guarantee["epsilon"] == 1.5 and answer.guarantee["delta"] == 0.0
    assert s.remaining().exact_epsilon == 1.5  # exact: 3 − 3·(1/2)
    # by hand: three releases at ε = 1/2 each. COUNT: Δ = 1 (discrete Laplace t = Δ/ε = 2); SUM of income in
    # [0, 2e5]: Δ = 2e5, b = 4e5; AVG: Σ(x − 50) and a count at ε = 1/4 each, Δ = 50 and 1: b = 200 and t = 4
    count, total, mean = (answer.releases[k].noise for k in ("COUNT(*)", "SUM(income)", "AVG(age)"))
    assert count[0]["t"] == pytest.approx(2.0, rel=1e-9)
    assert total[0]["b"] == pytest.approx(4e5, rel=1e-9)
    assert [c.get("b", c.get("t")) for c in mean] == pytest.approx([200.0, 4.0], rel=1e-9)


def test_group_by_without_keys_selects_them_once_and_states_delta() -> None:
    frame = _census(20000)
    s = pn.Session(frame, epsilon=2, delta=1e-5, rng=1)
    answer = s.sql("SELECT region, sex, AVG(age) AS a FROM census GROUP BY region, sex ORDER BY a DESC LIMIT 3",
                   epsilon=1, bounds=BOUNDS, delta=1e-6)
    assert len(answer.rows()) == 3 and answer.guarantee["delta"] == 1e-6
    assert [r["a"] for r in answer.rows()] == sorted((r["a"] for r in answer.rows()), reverse=True)
    assert answer.guarantee["releases"] == 2  # the selecting count and the means
    assert s.remaining().exact_epsilon == 1


def test_options_in_the_statement_set_the_budget_but_never_the_unit() -> None:
    frame = _census()
    s = pn.Session(frame, privacy_unit="person", max_contributions=1, epsilon=2, rng=1)
    answer = s.sql("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5, privacy_unit_column = person) COUNT(*) "
                   "FROM census", dialect="bigquery")
    assert answer.guarantee["epsilon"] == 0.5
    with pytest.raises(SqlError, match="privacy_unit_column = 'region'"):
        s.sql("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5, privacy_unit_column = region) COUNT(*) FROM t")
    with pytest.raises(SqlError, match="differs"):
        s.sql("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 0.5) COUNT(*) FROM t", epsilon=1)


REFUSED = [
    ("SELECT AVG(age) FROM t", {}, "`bounds` of `Session.sql` must declare the range of 'age'"),
    ("SELECT AVG(nope) FROM t", {"bounds": {"nope": (0, 1)}}, "nope"),
    ("SELECT COUNT(DISTINCT region) FROM t", {}, "counts privacy units"),
    ("SELECT region, VAR_POP(age) FROM t GROUP BY region", {"bounds": BOUNDS}, "with GROUP BY is not answered"),
    ("SELECT COUNT(*) FROM t WHERE age = 'old'", {}, "compare it with a number literal"),
    ("SELECT COUNT(*) FROM t WHERE region LIKE 3", {}, "LIKE takes a quoted pattern"),
    ("SELECT region, COUNT(*) FROM t GROUP BY region", {}, "δ > 0"),
    ("SELECT COUNT(*) FROM t", {"epsilon": None}, "needs a budget"),
    ("SELECT age FROM t", {}, "row-level value"),
]


@pytest.mark.parametrize(("statement", "options", "message"), REFUSED)
def test_refusals_come_before_any_charge(statement: str, options: dict, message: str) -> None:
    s = pn.Session(_census(200), epsilon=1, rng=1)
    before = s.remaining()
    kwargs = {"epsilon": 0.5, **options}
    with pytest.raises(InvalidParameterError, match=message):
        s.sql(statement, **kwargs)
    assert s.remaining() == before


def test_a_statement_beyond_the_budget_charges_nothing_of_its_parts() -> None:
    s = pn.Session(_census(200), epsilon=1, rng=1)
    s.count(epsilon=0.5)
    before = s.remaining()
    with pytest.raises(BudgetExceededError):
        s.sql("SELECT COUNT(*), AVG(age), SUM(age) FROM t", epsilon=0.6, bounds=BOUNDS)  # the third part is refused
    assert s.remaining() == before


def test_stddev_is_the_square_root_of_the_released_variance_and_a_division_by_zero_has_no_value() -> None:
    s = pn.Session(_census(), epsilon=4, rng=3)
    answer = s.sql("SELECT STDDEV_POP(age) AS sd, VAR_POP(age) AS v, COUNT(*) / (COUNT(*) - COUNT(*)) AS z "
                   "FROM t", epsilon=2, bounds=BOUNDS)
    row = answer.rows()[0]
    assert row["sd"] == pytest.approx(math.sqrt(row["v"]))
    assert row["z"] is None  # never NaN or infinity in an answer
    low, high = answer.intervals["z"]
    assert (low[0], high[0]) == (-math.inf, math.inf)
    assert answer.guarantee["releases"] == 2  # the variance once (STDDEV from it), the count once


def test_the_frame_has_one_row_per_group_with_intervals_and_the_guarantee() -> None:
    s = pn.Session(_census(), epsilon=2, rng=3)
    frame = s.sql("SELECT region, COUNT(*) AS n FROM t GROUP BY region", epsilon=1,
                  keys=["north", "south", "east", "west"]).to_frame()
    assert list(frame.columns) == ["region", "n", "n_low", "n_high", "guarantee"]
    assert list(frame.region) == ["east", "north", "south", "west"]
    assert frame.attrs["guarantee"]["epsilon"] == 1.0 and frame.guarantee.iloc[0].startswith("(1, 0)")


def test_a_session_on_dask_answers_the_same_statement_with_the_same_noise_and_guarantee() -> None:
    dd = pytest.importorskip("dask.dataframe")
    frame = _census(3000)
    frame.loc[::7, "region"] = None  # missing keys: IS NULL and three-valued logic on every partition
    statement = ("SELECT sex, AVG(age) AS a, COUNT(*) AS n FROM census WHERE (region IN ('north', 'east') OR region "
                 "IS NULL) AND NOT age < 30 GROUP BY sex")
    local = pn.Session(frame, epsilon=1, missing="drop", rng=4).sql(statement, epsilon=1, bounds=BOUNDS,
                                                                   keys=["f", "m"])
    spread = pn.Session(dd.from_pandas(frame, npartitions=3), epsilon=1, missing="drop", rng=4).sql(
        statement, epsilon=1, bounds=BOUNDS, keys=["f", "m"])
    assert local.guarantee == spread.guarantee
    assert {k: e.noise for k, e in local.releases.items()} == {k: e.noise for k, e in spread.releases.items()}
    # the same rows are aggregated: with ε = 1 the counts differ from the truth by a few units at most
    kept = frame[(frame.region.isin(["north", "east"]) | frame.region.isna()) & ~(frame.age < 30)]
    truth = kept.groupby("sex").size()
    for answer in (local, spread):
        for row in answer.rows():
            assert abs(row["n"] - truth[row["sex"]]) < 40  # discrete Laplace t = 2: P(|error| ≥ 40) < 1e-8
