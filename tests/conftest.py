"""Shared fixtures: the significance level of the statistical tests and two checks built on it.

The checks are fixtures (not a helper module) so that test files need no imports between them under
``--import-mode=importlib``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from privnoise.reproduce import CACHE_VARIABLE

#: Significance level of every goodness-of-fit test (SECURITY.md, requirement 3).
KS_ALPHA = 1e-6
#: Relative scale error the power checks must detect.
WRONG_SCALES = (0.7, 1.3)


@pytest.fixture(scope="session", autouse=True)
def _session_ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The command line's privacy ledger (PRIVNOISE_LEDGER) of session- and module-scoped fixtures: never the
    user's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PRIVNOISE_LEDGER", str(tmp_path_factory.getbasetemp() / "ledgers" / "session.sqlite"))
        yield


#: The reproduction reports, slowest first, that the run computes in a process of its own from its start.
WARMED_REPORTS = ("farokhi-sandberg", "koufogiannis", "liu-kawano-cao", "nageswaran", "farokhi-optimization")
_REPORTS = pytest.StashKey[tuple[str, "subprocess.Popen[bytes] | None"]]()
_WARMER = "import sys\nfrom privnoise import reproduce\nfor name in sys.argv[1:]:\n    reproduce.run(name)\n"


def _needs_reports(config: pytest.Config) -> bool:
    """Whether the run's paths include the reproduction tests or the documentation's (the whole suite does)."""
    root = Path(str(config.rootpath))
    wanted = (root / "tests" / "reproduce", root / "tests" / "docs")
    paths = [Path(str(a).split("::")[0]).resolve() for a in config.args] or [root]
    return any(p == w or p in w.parents for p in paths for w in wanted)


def pytest_configure(config: pytest.Config) -> None:
    """One directory of reproduction reports for the whole run (PRIVNOISE_REPRODUCE_CACHE,
    :mod:`privnoise.reproduce._cache`), which the parallel workers inherit from the process that starts them.

    Each report is computed once, by whichever process needs it first; the others wait on its lock and read it.
    When the run includes the tests that need reports, a process of its own starts computing them at once, so
    that no worker sits waiting for a report another worker computes (the slowest takes minutes)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # set by the controller
    directory = tempfile.mkdtemp(prefix="privnoise-reports-")
    os.environ[CACHE_VARIABLE] = directory
    warmer = None
    if _needs_reports(config):
        warmer = subprocess.Popen([sys.executable, "-c", _WARMER, *WARMED_REPORTS], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, cwd=str(config.rootpath))
    config.stash[_REPORTS] = (directory, warmer)


def pytest_unconfigure(config: pytest.Config) -> None:
    directory, warmer = config.stash.get(_REPORTS, (None, None))
    if warmer is not None and warmer.poll() is None:
        warmer.kill()
        warmer.wait()
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
        os.environ.pop(CACHE_VARIABLE, None)


@pytest.fixture(autouse=True)
def _test_ledger(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test's own command-line privacy ledger: tests share no budget and never touch the user's home."""
    ledger = tmp_path_factory.getbasetemp() / "ledgers" / f"{uuid.uuid4().hex}.sqlite"
    monkeypatch.setenv("PRIVNOISE_LEDGER", str(ledger))


@pytest.fixture
def ks_alpha() -> float:
    return KS_ALPHA


@pytest.fixture
def assert_ks() -> Callable[..., None]:
    """``assert_ks(samples, cdf, wrong_cdfs)``: KS accepts ``cdf`` and rejects every one of ``wrong_cdfs``."""

    def check(samples: np.ndarray, cdf: Callable, wrong_cdfs: Sequence[Callable] = ()) -> None:
        samples = np.asarray(samples)
        assert samples.ndim == 1 and samples.size >= 100_000
        assert np.isfinite(samples).all()
        p = stats.kstest(samples, cdf).pvalue
        assert p > KS_ALPHA, f"KS rejects the true distribution: p = {p:.3g}"
        for wrong in wrong_cdfs:
            p_wrong = stats.kstest(samples, wrong).pvalue
            assert p_wrong < KS_ALPHA, f"KS fails to reject a wrong reference: p = {p_wrong:.3g}"

    return check


@pytest.fixture
def assert_moments() -> Callable[..., None]:
    """``assert_moments(mechanism, samples)``: mean, covariance and second moment within 5 standard errors.

    Standard errors are estimated from the samples themselves: for the mean of coordinate i it is
    std(w_i)/√n, for the covariance entry (i, j) std((w_i − μ_i)(w_j − μ_j))/√n, for Q it is std(‖w‖²)/√n.
    """

    def check(mechanism, samples: np.ndarray) -> None:
        n = samples.shape[0]
        w = samples.reshape(n, -1)
        mean = np.atleast_1d(np.asarray(mechanism.mean(), dtype=float))
        cov = np.atleast_2d(np.asarray(mechanism.covariance(), dtype=float))
        root_n = np.sqrt(n)

        mean_err = np.abs(w.mean(axis=0) - mean) / (w.std(axis=0) / root_n)
        assert (mean_err < 5).all(), f"mean off by {mean_err} standard errors"

        y = w - mean
        products = y[:, :, None] * y[:, None, :]
        cov_err = np.abs(products.mean(axis=0) - cov) / (products.std(axis=0) / root_n)
        assert (cov_err < 5).all(), f"covariance off by {cov_err} standard errors"

        sq = np.einsum("ij,ij->i", w, w)
        q_err = abs(sq.mean() - mechanism.second_moment()) / (sq.std() / root_n)
        assert q_err < 5, f"second moment off by {q_err} standard errors"

    return check
