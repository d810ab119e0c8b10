"""Every structured operator and form gives the dense path's numbers to 1e-12, on random small cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg as sla
from scipy import sparse

from privnoise.fisher.cramer_rao import cramer_rao_bound
from privnoise.linalg import (
    BlockDiagonal,
    BlockDiagonalForm,
    DenseForm,
    DenseMatrix,
    Diagonal,
    DiagonalForm,
    Identity,
    IsotropicForm,
    Kronecker,
    KroneckerForm,
    Row,
    SparseMatrix,
)

TOL = 1e-12
SEEDS = range(6)


def close(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    np.testing.assert_allclose(a, b, rtol=0.0, atol=TOL * scale)


def random_pd(rng, k):
    a = rng.normal(size=(k, k))
    return a @ a.T + k * np.eye(k)


def operators(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    sp = sparse.random(n + 2, n, density=0.5, random_state=seed, format="csr") + sparse.eye(n + 2, n)
    return {
        "identity": Identity(n),
        "scaled identity": Identity(n, float(rng.uniform(-3, 3))),
        "diagonal": Diagonal(rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n)),
        "row": Row(rng.normal(size=n)),
        "constant row (mean)": Row.constant(n, 1.0 / n),
        "sparse": SparseMatrix(sp),
        "dense": DenseMatrix(rng.normal(size=(n + 1, n))),
        "kronecker": Kronecker(DenseMatrix(rng.normal(size=(3, 2))), DenseMatrix(rng.normal(size=(2, 2)))),
        "kronecker horizon I ⊗ C": Kronecker(Identity(3), DenseMatrix(rng.normal(size=(2, 2)))),
        "block diagonal": BlockDiagonal([DenseMatrix(rng.normal(size=(2, 2))), Identity(2, 1.5), Row([1.0, 2.0])]),
    }


def noise_informations(rng, m):
    return [
        IsotropicForm(m, float(rng.uniform(0.5, 3))),
        DiagonalForm(rng.uniform(0.5, 3, m)),
        DenseForm(random_pd(rng, m)),
    ]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", list(operators(0)))
def test_operator_matches_dense(seed, name):
    op = operators(seed)[name]
    rng = np.random.default_rng(100 + seed)
    c = np.asarray(op.dense(), dtype=float).reshape(op.shape)
    m, n = c.shape
    x = rng.normal(size=n)
    close(op.apply(x), c @ x)
    close(sum(op.apply_columns(x[i : i + 2], i) for i in range(0, n, 2)), c @ x)
    gram = c @ c.T
    close(op.gram().dense(), gram)
    close(op.gram().trace(), np.trace(gram))
    close(op.column_norms("l1"), np.abs(c).sum(axis=0))
    close(op.max_column_norm("l1"), np.abs(c).sum(axis=0).max())
    close(op.max_column_norm("l2"), np.sqrt((c * c).sum(axis=0)).max())
    close(op.max_abs_row_sum(), np.abs(c).sum(axis=1).max())
    close(op.absolute().dense(), np.abs(c))
    assert op.max_column_support() == np.count_nonzero(c, axis=0).max()
    if m % 2 == 0:
        blocks = np.sqrt((c * c).reshape(m // 2, 2, n).sum(axis=1)).sum(axis=0)
        close(op.max_column_norm("l1-l2", 2), blocks.max())
    for info in noise_informations(rng, m):
        j = info.dense()
        full = c.T @ j @ c
        close(op.record_information(info), np.diag(full))
        close(op.max_record_information(info), np.diag(full).max())
        close(op.information_trace(info), np.trace(full))
        expected = cramer_rao_bound(full) if n <= m else np.inf
        got = op.information_inverse_trace(info)
        if np.isinf(expected):
            assert got == np.inf
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-10)
    scale = op.record_scale(0, n)
    if scale is not None:
        close(np.broadcast_to(scale, (n,)) * x, c @ x)


def forms(seed):
    rng = np.random.default_rng(seed)
    return {
        "isotropic": IsotropicForm(4, float(rng.uniform(0.5, 2))),
        "diagonal": DiagonalForm(rng.uniform(0.5, 2, 5)),
        "dense": DenseForm(random_pd(rng, 4)),
        "kronecker": KroneckerForm(DenseForm(random_pd(rng, 2)), DiagonalForm(rng.uniform(0.5, 2, 3))),
        "block diagonal": BlockDiagonalForm([DenseForm(random_pd(rng, 2)), IsotropicForm(3, 2.0)]),
    }


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", list(forms(0)))
def test_form_matches_dense(seed, name):
    form = forms(seed)[name]
    rng = np.random.default_rng(200 + seed)
    a = form.dense()
    k = a.shape[0]
    eig = np.linalg.eigvalsh(a)
    close(form.diagonal(), np.diag(a))
    close(form.trace(), np.trace(a))
    close(form.eigenvalue_range(), (eig[0], eig[-1]))
    close(form.sqrt().dense(), sla.sqrtm(a).real)
    close(form.inverse().dense(), np.linalg.inv(a))
    close(form.power(-0.5).dense(), np.linalg.inv(sla.sqrtm(a).real))
    close(form.scaled(2.5).dense(), 2.5 * a)
    close(form.log_determinant(), np.linalg.slogdet(a)[1])
    y = rng.normal(size=(3, k))
    close(form.matvec(y), y @ a)
    close(form.quadratic(y), np.einsum("ij,jk,ik->i", y, a, y))
    z = rng.normal(size=(4000, k))
    w = form.factor_apply(z.copy())
    factor = np.linalg.lstsq(z, w, rcond=None)[0].T  # the linear map z ↦ Lz actually applied
    close(factor @ factor.T, a)
    other = DenseForm(random_pd(rng, k))
    close(form.trace_product(other), np.trace(a @ other.dense()))
    close(form.trace_product(IsotropicForm(k, 3.0)), 3.0 * np.trace(a))


def test_principal_blocks():
    form = BlockDiagonalForm([DenseForm([[2.0, 1.0], [1.0, 2.0]]), IsotropicForm(3, 2.0)])
    assert form.principal(0, 2).dense().shape == (2, 2)
    assert form.principal(1, 3) is None  # cuts through a coupled block
    close(form.principal(2, 4).dense(), 2.0 * np.eye(2))
    assert DenseForm([[1.0, 0.5], [0.5, 1.0]]).principal(0, 1) is None
    close(IsotropicForm(10, 3.0).principal(2, 5).dense(), 3.0 * np.eye(3))


def test_nothing_large_is_materialised():
    n = 10**9
    op = Identity(n, 2.0)
    info = IsotropicForm(n, 0.5)
    assert op.gram().sqrt().trace() == 2.0 * n
    assert op.max_record_information(info) == 2.0
    assert op.information_inverse_trace(info) == n / 2.0
    assert op.information_trace(info) == 2.0 * n
    assert Row.constant(n, 1.0 / n).gram().trace() == pytest.approx(1.0 / n)
    with pytest.raises(Exception, match="entries"):
        op.dense()
