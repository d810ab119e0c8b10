"""Reproduction rows of Farokhi's private quadratic optimisation paper."""

from __future__ import annotations

import numpy as np
import pytest

from privnoise.reproduce import farokhi_optimization as fo

# The tolerance of each row's printed-against-computed comparison, stated here (rows carry none).
TOLERANCES: dict[str, float] = {
    "fig1-diabetes-Ef-eps0.001": 0.02,
    "fig1-diabetes-Ef-eps0.1": 0.02,
    "fig1-diabetes-Ef-eps10": 0.02,
    "fig1-diabetes-gap-linear": 1e-06,
    "fig1-diabetes-inverse-trace": 1e-06,
    "fig1-diabetes-optimum": 1e-09,
    "prop1-bound-below-crb": 0.0,
    "prop1-crb-from-iterates": 1e-09,
    "prop1-crb-monte-carlo": 0.03,
    "prop1-printed-constant": 1e-09,
    "prop2-counterexample": 0.0,
    "sec3-expansion-corrected": 1e-12,
    "sec3-expansion-printed": 1e-09,
    "thm1-fisher-trace": 1e-06,
    "thm1-laplace-competitor": 1e-09,
    "thm1-variance": 0.01,
}


ADULT = (
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, "
    "United-States, <=50K\n"
    "52, Self-emp-inc, 287927, HS-grad, 9, Married-civ-spouse, Exec-managerial, Wife, White, Female, 15024, 0, 40, "
    "United-States, >50K\n"
    "31, Private, 45781, Masters, 14, Never-married, Prof-specialty, Not-in-family, White, Female, 14084, 0, 50, "
    "?, >50K\n"
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    directory = tmp_path_factory.mktemp("farokhi-optimization")
    adult = directory / "adult.data"
    adult.write_text(ADULT * 20, encoding="utf-8")
    rep = fo.build_report(directory, adult_file=adult)
    return rep, directory


DIABETES_KEYS = [
    "fig1-diabetes-Ef-eps0.001",
    "fig1-diabetes-Ef-eps0.1",
    "fig1-diabetes-Ef-eps10",
    "fig1-diabetes-gap-linear",
    "fig1-diabetes-inverse-trace",
    "fig1-diabetes-optimum",
    "prop1-bound-below-crb",
    "prop1-crb-from-iterates",
    "prop1-crb-monte-carlo",
    "prop1-printed-constant",
    "prop2-counterexample",
    "sec3-expansion-corrected",
    "sec3-expansion-printed",
    "thm1-fisher-trace",
    "thm1-laplace-competitor",
    "thm1-variance",
]


def test_the_report_has_every_tested_row(report):
    rep, _ = report
    keys = {r.key for r in rep.rows}
    assert set(DIABETES_KEYS) <= keys
    assert all(k in DIABETES_KEYS or k.startswith("fig1-adult") for k in keys)


@pytest.mark.parametrize("key", DIABETES_KEYS)
def test_row(report, key):
    row = report[0].row(key)
    if row.status == "match" or (row.status == "check" and row.key != "prop1-bound-below-crb"):
        assert row.agrees(rtol=TOLERANCES[row.key]), row
    if row.status == "erratum":
        assert not row.agrees(rtol=TOLERANCES[row.key]), row


def test_rows_and_statuses(report):
    rep, directory = report
    assert rep.row("thm1-fisher-trace").printed == pytest.approx(1210.0)
    assert rep.row("prop1-bound-below-crb").computed <= rep.row("prop1-bound-below-crb").printed
    # errata 12: no noise, yet a positive gap where the printed bound is 0
    assert rep.row("prop2-counterexample").printed == 0.0 < rep.row("prop2-counterexample").computed
    # the printed Proposition 1 constant gives more than the attainable Cramér–Rao bound
    assert rep.row("prop1-printed-constant").printed > rep.row("prop1-printed-constant").computed
    assert "fig1-adult-optimum" in {r.key for r in rep.rows}
    assert (directory / "report.md").exists() and (directory / "figure1.png").stat().st_size > 1000


def test_inverse_trace_is_epsilon_over_n_squared():
    from privnoise.optimization import optimal_noise

    for n, eps in [(11, 0.01), (15, 3.0)]:
        inverse_trace = 1 / np.trace(optimal_noise(eps, n).fisher_information())
        assert inverse_trace == pytest.approx(eps / n**2, rel=1e-12)


def test_printed_expansion_misses_the_cost_that_the_corrected_program_meets():
    """Errata 13: inner products ũᵀũ make Q a multiple of I; the direct cost is met only with outer products."""
    import privnoise.optimization as po
    from privnoise.exceptions import DimensionError

    rng = np.random.default_rng(7)
    u, z = rng.uniform(-1, 1, (40, 3)), rng.uniform(0, 1, 40)
    ut = np.hstack([u, np.ones((40, 1))])
    qp, qvp = fo.printed_expansion(u, z)
    assert np.allclose(qp, qp[0, 0] * np.eye(4))
    corrected = po.regression_problem(u, z, ridge=0.5)
    for x in rng.standard_normal((5, 4)):
        direct = np.mean((ut @ x - z) ** 2) + 0.5 * x @ x
        assert corrected.objective(x) == pytest.approx(direct, rel=1e-12)
        assert abs(0.5 * x @ qp @ x + qvp @ x + np.mean(z**2) - direct) > 1e-3
    with pytest.raises(DimensionError, match="printed_expansion"):
        fo.printed_expansion(u, z[:-1])
