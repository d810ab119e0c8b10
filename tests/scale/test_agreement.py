"""The in-memory and the Dask paths release the same distribution and state the same guarantee.

The noise of a record-level release is drawn on the workers, from one AES-CTR stream per partition; in memory it
is drawn from the process's generator. Over 120,000 records the noise (release − data) of each path passes a KS
test at α = 1e-6 against the noise law and fails it at a 30 % wrong scale (power check), and a two-sample KS test
finds no difference between the paths while it does find a 30 % wider noise. Aggregates, whose noise is drawn
centrally by the same code in both paths, are checked for exact equality in test_session.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import privnoise as pn

N = 120_000
ALPHA = 1e-6


@pytest.fixture(scope="module")
def data(cluster: object, tmp_path_factory: pytest.TempPathFactory) -> tuple[object, np.ndarray]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("agreement")
    x = np.random.default_rng(11).uniform(0.0, 60.0, N)
    for i, part in enumerate(np.array_split(x, 4)):
        pq.write_table(pa.table({"kwh": part}), folder / f"part-{i}.parquet", row_group_size=10_000)
    return pn.io.dask_parquet(str(folder), partition_rows=20_000)["kwh"], x


LAWS = {
    "gaussian": (lambda q: pn.fisher.optimal_noise(q, quality_budget=N * 4.0), stats.norm(scale=2.0)),
    "laplace": (lambda q: pn.dp.laplace_for_epsilon(10.0, sensitivity=60.0, dim=N), stats.laplace(scale=6.0)),
}


@pytest.mark.parametrize("family", sorted(LAWS))
def test_both_paths_release_the_noise_law_and_the_same_guarantee(data, family: str, assert_ks) -> None:
    series, x = data
    q = pn.queries.identity(N, bounds=(0, 60))
    design, law = LAWS[family]
    mech = design(q)
    on_dask, in_memory = pn.release(series, q, mech), pn.release(x, q, mech)
    assert on_dask.guarantee.as_dict() == in_memory.guarantee.as_dict() and on_dask.grid == in_memory.grid
    wrong = [stats.norm(scale=s * law.std() / stats.norm.std()).cdf if family == "gaussian"
             else stats.laplace(scale=s * law.std() / stats.laplace.std()).cdf for s in (0.7, 1.3)]
    dask_noise, memory_noise = on_dask.value - x, in_memory.value - x
    assert_ks(dask_noise, law.cdf, wrong)
    assert_ks(memory_noise, law.cdf, wrong)
    assert stats.ks_2samp(dask_noise, memory_noise).pvalue > ALPHA
    wider = 1.3 * (pn.release(x, q, mech).value - x)  # a fresh in-memory release, its noise 30 % wider
    assert stats.ks_2samp(dask_noise, wider).pvalue < ALPHA  # the same two-sample test sees it
