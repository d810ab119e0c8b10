"""Ratio intervals whose accepted set is not an interval, and the edges of the ratio and difference-tail code.

With an offset c (a mean made as Ŝ − cN̂) and a count near zero, the p-value of m dips below α and rises again
(the count's noise enters with the coefficient m + c), so the accepted set of m is two pieces, the outer one
reaching the range's edge. The limits are checked against the documented rule written again here on the p-value
of ``test_ratio_interval_reference`` (exact tails by closed form, checked there by integration), for both code
paths (Brent's method for one release, vectorised bisection for many). The guard that moves a limit past accepted
grid points beyond a rejected stretch (no p-value has been seen to need it) is checked on sets given directly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privnoise.mechanisms.error_laws import error_law
from privnoise.planning.accuracy import NoiseLaw, _difference_tail, _p_value_one, ratio_interval
from tests.analysis.test_ratio_interval_reference import _laplace_tail, _p_ref

# (family, sum scale, count scale, offset, half range, level, Ŝ, N̂): each has a two-piece accepted set
TWO_PIECES = [
    ("laplace", 2.8, 4.8, -2.1, 5.0, 0.95, -5.4, 5.0),
    ("laplace", 1.06, 3.8, -1.87, 5.0, 0.9, 13.35, 3.86),
    ("laplace", 1.4, 4.95, 1.55, 5.0, 0.9, -11.5, 9.8),
    ("gaussian", 0.92, 4.83, 1.52, 5.0, 0.9, -1.91, 2.42),
    ("gaussian", 1.11, 4.06, 1.05, 5.0, 0.9, -5.26, 0.87),
]


def _crossing(s, n, first, second, offset, alpha, centre, edge):
    """The rejected end of the crossing between ``centre`` (accepted) and ``edge`` (rejected), by bisection."""
    inside, outside = centre, edge
    for _ in range(200):
        middle = (inside + outside) / 2.0
        if middle in (inside, outside):
            break
        if _p_ref(middle, s, n, first, second, offset) > alpha:
            inside = middle
        else:
            outside = middle
    return outside


def _rule(s, n, first, second, offset, level, h):
    """The documented limits: crossing, then the 32-point extension towards each edge."""
    alpha = 1.0 - level
    if not n > 0:
        return -h, h
    centre = min(max(s / n, -h), h)
    if not _p_ref(centre, s, n, first, second, offset) > alpha:
        return centre, centre
    out = []
    for edge in (-h, h):
        if _p_ref(edge, s, n, first, second, offset) > alpha:
            out.append(edge)
            continue
        limit = _crossing(s, n, first, second, offset, alpha, centre, edge)
        start, span = limit, edge - limit
        farthest = max((j for j in range(1, 33) if _p_ref(start + span * j / 32.0, s, n, first, second, offset)
                        > alpha), default=0)
        if farthest:
            limit = start + span * min(farthest + 1, 32) / 32.0
        out.append(min(max(limit, -h), h))
    return out[0], out[1]


def _pieces(s, n, first, second, offset, alpha, h):
    grid = np.linspace(-h, h, 20001)
    accepted = np.array([_p_ref(float(m), s, n, first, second, offset) > alpha for m in grid])
    return int(np.count_nonzero(np.diff(accepted.astype(int)) == 1) + accepted[0]), grid[accepted]


@pytest.mark.parametrize("case", TWO_PIECES)
def test_a_set_of_two_pieces_is_covered_by_the_documented_extension(case) -> None:
    family, a, b, offset, h, level, s, n = case
    first, second = NoiseLaw(error_law(family, a)), NoiseLaw(error_law(family, b))
    pieces, accepted = _pieces(s, n, first, second, offset, 1.0 - level, h)
    assert pieces == 2  # the case is what it claims to be
    ref = _rule(s, n, first, second, offset, level, h)
    one = ratio_interval([s], [n], first, second, level, half_range=h, offset=offset)
    # the vectorised path, with releases of other shapes beside it (an interval, no count, a rejected estimate)
    s_all = np.array([s, 0.3 * 40.0, 1.0, 50.0 * h])
    n_all = np.array([n, 40.0, 0.0, 50.0])
    many = ratio_interval(s_all, n_all, first, second, level, half_range=h, offset=offset)
    for low, high in ((one[0][0], one[1][0]), (many[0][0], many[1][0])):
        assert low == pytest.approx(ref[0], abs=1e-9 * h)
        assert high == pytest.approx(ref[1], abs=1e-9 * h)
        assert low <= accepted.min() and high >= accepted.max()
    for i in range(1, 4):
        expected = _rule(float(s_all[i]), float(n_all[i]), first, second, offset, level, h)
        assert many[0][i] == pytest.approx(expected[0], abs=1e-9 * h)
        assert many[1][i] == pytest.approx(expected[1], abs=1e-9 * h)


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
@pytest.mark.parametrize("h", [0.01, 0.5, 3.0])
def test_limits_follow_the_rule_for_small_counts_small_ranges_and_estimates_beyond_the_range(family, h) -> None:
    rng = np.random.default_rng(7)
    first, second = NoiseLaw(error_law(family, 0.5 * h)), NoiseLaw(error_law(family, 0.6))
    level, offset = 0.9, 0.2 * h
    n_all = np.concatenate([rng.uniform(0.05, 1.0, 6), rng.uniform(1.0, 30.0, 6), [0.0, -2.0]])
    m_all = rng.uniform(-3.0 * h, 3.0 * h, n_all.size)  # some estimates beyond the range on either side
    s_all = m_all * np.abs(n_all) + rng.normal(0.0, 0.3, n_all.size)
    many = ratio_interval(s_all, n_all, first, second, level, half_range=h, offset=offset)
    alpha = 1.0 - level
    for i in range(n_all.size):
        s, n = float(s_all[i]), float(n_all[i])
        ref = _rule(s, n, first, second, offset, level, h)
        one = ratio_interval([s], [n], first, second, level, half_range=h, offset=offset)
        # Brent's method to 1e-13·h, then a step of 4·(1e-13·h + 4 ulp) to the rejected side: within 1e-12·h
        for low, high in ((one[0][0], one[1][0]), (many[0][i], many[1][i])):
            assert low == pytest.approx(ref[0], abs=1e-12 * h) and high == pytest.approx(ref[1], abs=1e-12 * h)
            # an end strictly inside the range is on the rejected side of the exact p-value
            for end in (low, high):
                if abs(end) < h and ref[0] != ref[1]:
                    assert _p_ref(end, s, n, first, second, offset) <= alpha


@pytest.mark.parametrize(("a", "c"), [(0.01, 0.0105), (0.01, 0.0099), (2.0, 1.0), (0.5, 1.0), (3.0, 0.0)])
def test_the_difference_tail_at_small_scales_and_a_unit_count_scale(a: float, c: float) -> None:
    # scales a few per cent apart at a = 0.01 take the exact formula, not the one for equal scales; a count scale of
    # exactly 1 (slope 1, count noise 1) and of 0 take theirs
    xs = np.array([0.0, 0.3 * a, a, 4.0 * a, 11.0 * a])
    sum_law, count_law = NoiseLaw(error_law("laplace", a)), NoiseLaw(error_law("laplace", 1.0))
    got = _difference_tail(xs, sum_law, count_law, np.full(xs.size, c))
    for x, value in zip(xs, got, strict=True):
        ref = _laplace_tail(float(x), a, c)
        assert value == pytest.approx(ref, rel=1e-8, abs=1e-15)
        one = _p_value_one(0.0, float(x), 1.0, sum_law, count_law, c)
        assert one == pytest.approx(ref, rel=1e-8, abs=1e-15)
    assert math.isclose(float(got[0]), 1.0)


def _in_pieces(pieces):
    """Membership in a union of closed intervals (the accepted set handed to the extension directly)."""
    return lambda m: any(lo <= m <= hi for lo, hi in pieces)


def _extension_rule(limit, boundary, pieces):
    """The documented rule, on ``np.linspace``'s grid: the point after the farthest accepted one of 32."""
    grid = np.linspace(limit, boundary, 33)[1:]
    hits = [j for j, m in enumerate(grid, start=1) if _in_pieces(pieces)(m)]
    return limit if not hits else float(grid[min(hits[-1] + 1, 32) - 1])


def _random_sets(rng, count):
    out = []
    for _ in range(count):
        limit, boundary = sorted(rng.uniform(-3.0, 3.0, 2))
        if rng.random() < 0.5:
            limit, boundary = boundary, limit
        cuts = np.sort(rng.uniform(min(limit, boundary), max(limit, boundary), 2 * int(rng.integers(0, 4))))
        out.append((float(limit), float(boundary), [(float(a), float(b)) for a, b in cuts.reshape(-1, 2)]))
    out.append((0.0, 1.0, [(0.4, 0.45)]))  # a span of exactly 1
    out.append((-1.0, -1.0, [(-2.0, 0.0)]))  # no span: the limit stays
    out.append((2.0, 0.0, [(0.0, 0.01)]))  # the last grid point accepted: the boundary
    out.append((0.5, 2.5, [(0.52, 0.58)]))  # only the first grid point accepted
    return out


def test_the_extension_moves_a_limit_past_the_farthest_accepted_grid_point() -> None:
    from privnoise.planning.accuracy import _extend_many, _extend_one

    sets = _random_sets(np.random.default_rng(11), 200)
    assert sum(1 for limit, boundary, pieces in sets if _extension_rule(limit, boundary, pieces) != limit) > 50
    for limit, boundary, pieces in sets:
        expected = _extension_rule(limit, boundary, pieces)
        got = _extend_one(limit, boundary, _in_pieces(pieces))
        assert got == pytest.approx(expected, rel=1e-14, abs=1e-14)
        # every accepted grid point lies between the limit and the extended limit
        for m in np.linspace(limit, boundary, 33)[1:]:
            if _in_pieces(pieces)(m):
                assert min(limit, got) - 1e-12 <= m <= max(limit, got) + 1e-12
    limits = np.array([s[0] for s in sets])
    boundaries = np.array([s[1] for s in sets])

    def accepted(m):
        assert m.shape == (32, len(sets))  # every grid point of every limit in one call
        return np.array([[_in_pieces(sets[i][2])(row[i]) for i in range(len(sets))] for row in m])

    many = _extend_many(limits, boundaries, accepted)
    for i, (limit, boundary, pieces) in enumerate(sets):
        assert many[i] == pytest.approx(_extension_rule(limit, boundary, pieces), rel=1e-14, abs=1e-14)


def test_a_crossing_at_zero_is_stepped_past_by_a_few_ulps() -> None:
    # Gaussian, no grid, no offset: p(0) = erfc(|Ŝ|/(σ₁√2)), so Ŝ = σ₁√2 erfc⁻¹(α) puts the lower crossing at m = 0
    # (a tolerance relative to the root alone would vanish there): the limit is within 1e-12 of 0, rejected
    from scipy import special

    first, second = NoiseLaw(error_law("gaussian", 1.0)), NoiseLaw(error_law("gaussian", 0.5))
    level, h, n = 0.9, 1.0, 10.0
    at_zero = math.sqrt(2.0) * float(special.erfcinv(1.0 - level))
    for s in at_zero * (1.0 + np.arange(-20, 21) * 2e-16):  # the crossing a few ulps either side of 0
        low, high = ratio_interval([s], [n], first, second, level, half_range=h)
        assert abs(low[0]) < 1e-12 and _p_ref(low[0], s, n, first, second, 0.0) <= 1.0 - level
        assert 0.1 < high[0] < h
