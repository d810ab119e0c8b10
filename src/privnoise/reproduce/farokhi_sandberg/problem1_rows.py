"""Farokhi & Sandberg, Problem 1 / Theorem 1: sup Tr 𝓘⁻¹ on a box, an L-shape and a disc, bracketed.

Theorem 1 states only a necessary condition, (11), for the non-concave Problem 1 (Remark 6), and Remark 2 leaves
its existence open. :func:`privnoise.fisher.solve_problem1` brackets the supremum between explicit feasible
densities and an upper bound from the planes Tr(MX) ≥ 4λ₁(M) that every density's information satisfies. On the
box and the L-shape with a correlated CCᵀ the bracket closes on the chord limit L²vᵀBv/(4π²) of the (1, −1)
diagonal, which densities concentrating on that chord approach and the upper bound meets only in that limit; on
the disc it closes on an interior maximiser that solves (11).

Each row has a second method independent of the code under test: the chord limit by hand from the support's
corners, the explicit densities' Tr 𝓘⁻¹ by a midpoint rule with central differences of their pdf, and (11) at the
disc's maximiser by a fresh eigenproblem for the weight C𝓘⁻²Cᵀ.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ... import queries
from ...fisher import Ball, Box, Polygon, solve_dirichlet_eigenproblem, solve_problem1
from .._report import Row, make_row, second_method
from .general_supports import SupportsSetup

__all__ = ["figure", "rows", "solve", "trace_inverse_by_differences"]


def solve(s: SupportsSetup) -> dict[str, Any]:
    """Problem 1 on the report's supports, computed once for the rows and the figure."""
    c = np.array(s.correlated_c)
    q = queries.LinearQuery(c)
    rtol, tol, frames = s.problem1_rtol, s.problem1_tol, s.problem1_frames
    return {
        "p1-box": solve_problem1(q, Box(*s.box), rtol=rtol, tol=tol, frames=frames),
        "p1-l-shape": solve_problem1(q, Polygon(s.l_shape), rtol=rtol, tol=tol, frames=frames),
        "p1-disc": solve_problem1(q, Ball([0.0, 0.0], s.disc_radius), rtol=rtol, tol=tol, frames=frames),
        "p1-separable": solve_problem1(
            queries.LinearQuery(np.diag(np.sqrt(s.diagonal_a))), Box(*s.rectangle), rtol=rtol, tol=1e-2, frames=frames
        ),
    }


@second_method
def trace_inverse_by_differences(
    pdf: Any, lower: NDArray[np.float64], upper: NDArray[np.float64], gram: NDArray[np.float64], grid: int
) -> tuple[float, float]:
    """Tr((Cᵀ𝓘_wC)⁻¹) and ∫γ of a density by the midpoint rule on a grid of its bounding box (a second method).

    𝓘_w = ∫∇γ∇γᵀ/γ with ∇γ by central differences of ``pdf`` alone (step 10⁻⁴ of the cell), so neither the
    density's closed form nor its finite-element gradient is used.
    """
    h = (upper - lower) / grid
    axes = [lower[i] + h[i] * (np.arange(grid) + 0.5) for i in range(2)]
    w = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 2)
    g = np.asarray(pdf(w))
    step = 1e-4 * h
    grad = np.stack(
        [(np.asarray(pdf(w + step[i] * e)) - np.asarray(pdf(w - step[i] * e))) / (2 * step[i]) for i, e in enumerate(np.eye(2))],
        axis=1,
    )
    pos = g > 0
    info = np.einsum("ni,nj->ij", grad[pos] / g[pos, None], grad[pos]) * float(h.prod())
    return float(np.trace(np.linalg.solve(info, np.linalg.inv(gram)))), float(g.sum() * h.prod())


def _rectangle_box(density: Any) -> tuple[NDArray[np.float64], NDArray[np.float64], Any, NDArray[np.float64]]:
    """The rectangle density in its own frame z = Rᵀ(w − m), where the grid is aligned with it: the box, the pdf
    in z and the rotation R (𝓘_z = Rᵀ𝓘_w R, so CCᵀ becomes RᵀCCᵀR)."""
    v = density.direction
    n = np.array([-v[1], v[0]])
    frame = np.column_stack([v, n])

    def pdf(z: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(density.pdf(density.center + z @ frame.T))

    half = np.array([density.half_length, density.half_width])
    return -half, half, pdf, frame


def _bracket_text(p1: Any) -> str:
    chord = p1.limit.chord
    d = p1.best_chord_density.half_width
    return (
        f"lower bound {p1.lower_bound:.9f} ({'finite-element density' if p1.lower_bound == p1.trace_inverse else f'cos² rectangle of half-width {d:.2g} on the chord'}), "
        f"chord limit {p1.limit.value:.9f} (chord of length {chord.length:.6g} from {np.round(chord.start, 6).tolist()} to "
        f"{np.round(chord.end, 6).tolist()}), upper bound {p1.upper_bound:.9f} (planes of chords, Faber–Krahn, "
        f"rectangles and finite-element eigenvalues lowered by ten error estimates; the closed-form planes alone "
        f"{p1.closed_form_upper_bound:.7f}); best finite-element density {p1.trace_inverse:.5f}; "
        f"status {p1.status}, converged: {p1.converged}"
    )


def rows(s: SupportsSetup, solutions: dict[str, Any]) -> list[Row]:
    """Rows for Problem 1 / Theorem 1: bracket and second method per support, (11) at the disc's maximiser."""
    c = np.array(s.correlated_c)
    gram = c @ c.T
    b = np.linalg.inv(gram)
    out: list[Row] = []
    (x0, y0), (x1, y1) = s.box
    diagonal = np.array([x1 - x0, -(y1 - y0)])  # the (1, −1) diagonal of the box, by hand
    box_limit = float(diagonal @ b @ diagonal) / (4 * math.pi**2)
    corner = np.array(s.l_shape[5], dtype=float) - np.array(s.l_shape[1], dtype=float)  # (0, 2) − (2, 0)
    l_limit = float(corner @ b @ corner) / (4 * math.pi**2)
    for key, label, closed in (
        ("box", f"box {list(s.box)} with C = {[list(r) for r in s.correlated_c]}", box_limit),
        ("l-shape", "L-shape (non-convex), same C", l_limit),
    ):
        p1 = solutions[f"p1-{key}"]
        out.append(
            make_row(
                key=f"thm1-{key}",
                claim=f"Thm 1 / Problem 1 on the {label}: sup Tr 𝓘⁻¹ is the chord limit L²vᵀBv/(4π²) of the (1, −1) "
                "diagonal, approached by cos² densities on thinner rectangles, a limit (printed = that "
                "limit by hand from the corners, computed = the upper bound; the paper prints neither)",
                printed=closed,
                computed=p1.upper_bound,
                status="check",
                reason=_bracket_text(p1),
                method="closed form: L²vᵀBv/(4π²) of the (1, −1) chord, its ends read off the support's corners",
            )
        )
        density = p1.best_chord_density
        lo, hi, pdf, frame = _rectangle_box(density)
        quadrature, mass = trace_inverse_by_differences(pdf, lo, hi, frame.T @ gram @ frame, s.grid)
        out.append(
            make_row(
                key=f"thm1-{key}-lower",
                claim=f"Thm 1 on the {label}: Tr 𝓘⁻¹ of the explicit lower-bound density, cos² on a rectangle of "
                f"half-width {density.half_width:.2g} along the chord (printed = second method, computed = its "
                "closed form (A²vᵀBv + D²nᵀBn)/π²)",
                printed=quadrature,
                computed=density.trace_inverse(gram),
                status="check",
                reason=f"second method: midpoint rule on a {s.grid}² grid of the rectangle with central differences "
                f"of the density; ∫γ = {mass:.9f}; the rectangle lies in W and γ vanishes on its boundary",
                method=f"quadrature: midpoint rule on a {s.grid}² grid of the rectangle, ∇γ by central differences "
                "of the pdf alone",
            )
        )
    p1 = solutions["p1-disc"]
    r = s.disc_radius
    quadrature, mass = trace_inverse_by_differences(
        p1.noise.pdf, np.array([-r, -r]), np.array([r, r]), gram, s.grid
    )
    out.append(
        make_row(
            key="thm1-disc",
            claim=f"Thm 1 / Problem 1 on the disc of radius {r:g}, same C: sup Tr 𝓘⁻¹ is attained by an interior "
            "maximiser (printed = the lower bound, Tr 𝓘⁻¹ of that finite-element density; computed = the upper bound)",
            printed=p1.lower_bound,
            computed=p1.upper_bound,
            status="check",
            reason=f"{_bracket_text(p1)}; second method for the lower bound: midpoint rule on a {s.grid}² grid "
            f"with central differences of the density gives {quadrature:.6f} (∫γ = {mass:.6f})",
            method=f"quadrature: midpoint rule on a {s.grid}² grid with ∇γ by central differences of the pdf, for "
            "the lower bound's density",
        )
    )
    info = c.T @ np.asarray(p1.noise.fisher_information()) @ c
    inv = np.linalg.inv(info)
    fresh = solve_dirichlet_eigenproblem(
        Ball([0.0, 0.0], r), c @ inv @ inv @ c.T, rtol=s.problem1_rtol, certify=False
    )
    out.append(
        make_row(
            key="thm1-disc-stationarity",
            claim="Thm 1, (11) at the disc's maximiser: u is the principal eigenfunction of −∇·(C𝓘⁻²Cᵀ∇u) = μu "
            "with μ = Tr 𝓘⁻¹/4 (printed = λ₁ for that weight by a fresh eigenproblem, computed = Tr 𝓘⁻¹/4, the "
            "Rayleigh quotient of u)",
            printed=fresh.eigenvalue,
            computed=p1.trace_inverse / 4.0,
            status="check",
            reason="equal Rayleigh quotient and λ₁ mean u is the (simple) principal eigenfunction: (11) holds; "
            f"fresh solve error estimate {fresh.error_estimate:.1e}",
            method="discretisation: a fresh eigenproblem −∇·(C𝓘⁻²Cᵀ∇u) = μu on the disc, its weight built from "
            "the maximiser's information",
        )
    )
    p1 = solutions["p1-separable"]
    (x0, y0), (x1, y1) = s.rectangle
    a = np.array(s.diagonal_a)
    product = ((x1 - x0) ** 2 / a[0] + (y1 - y0) ** 2 / a[1]) / (4 * math.pi**2)
    out.append(
        make_row(
            key="thm1-separable",
            claim="Thm 1 on the box [0, 2]×[0, 1] with diagonal CCᵀ = diag(2, 0.5): Problem 2's product cos² and the "
            "diagonal chord both give Σwᵢ²Bᵢᵢ/(4π²) (printed = that closed form, computed = the upper bound)",
            printed=product,
            computed=p1.upper_bound,
            status="check",
            reason=f"{_bracket_text(p1)}; the closed-form planes leave this gap (tolerance 1e-2)",
            method="closed form: Σwᵢ²Bᵢᵢ/(4π²) of the product cos² on the box",
        )
    )
    return out


def figure(output: Path, s: SupportsSetup, solutions: dict[str, Any]) -> tuple[str, str]:
    """The maximising densities: cos² on a thin rectangle along the chord (box, L-shape), the disc's maximiser."""
    import matplotlib.tri as mtri

    from ...plotting import figure as new_figure
    from ...plotting import save

    c = np.array(s.correlated_c)
    gram = c @ c.T
    fig = new_figure(figsize=(13, 4.4), layout="constrained")
    axes = fig.subplots(1, 3)
    outlines = {
        "p1-box": np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [-1, -1]], dtype=float),
        "p1-l-shape": np.array([*s.l_shape, s.l_shape[0]], dtype=float),
    }
    for ax, key, title in zip(axes[:2], ("p1-box", "p1-l-shape"), ("box", "L-shape"), strict=True):
        p1 = solutions[key]
        density = p1.limit.sequence[2]
        outline = outlines[key]
        lo, hi = outline.min(axis=0), outline.max(axis=0)
        gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 401), np.linspace(lo[1], hi[1], 401))
        values = density.pdf(np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
        image = ax.imshow(values, origin="lower", extent=(lo[0], hi[0], lo[1], hi[1]), cmap="viridis")
        ax.plot(outline[:, 0], outline[:, 1], color="white", lw=1.2)
        chord = np.array([p1.limit.chord.start, p1.limit.chord.end])
        ax.plot(chord[:, 0], chord[:, 1], "--", color="tab:red", lw=0.8)
        ax.set_title(
            f"{title}: cos² on a rectangle, " + r"Tr $\mathcal{I}^{-1}$" + f" = {density.trace_inverse(gram):.4f}\n"
            f"→ chord limit {p1.limit.value:.5f} (upper bound {p1.upper_bound:.5f})",
            fontsize=9,
        )
        fig.colorbar(image, ax=ax, shrink=0.8, label="γ(w)")
    p1 = solutions["p1-disc"]
    solution = p1.noise.solution
    pts = np.asarray(solution.points)
    tri = mtri.Triangulation(pts[:, 0], pts[:, 1], np.asarray(solution.cells))
    image = axes[2].tricontourf(tri, p1.noise.pdf(pts), levels=30, cmap="viridis")
    axes[2].set_aspect("equal")
    axes[2].set_title(
        "disc: attained maximiser,\n" + r"Tr $\mathcal{I}^{-1}$" + f" ∈ [{p1.lower_bound:.6f}, {p1.upper_bound:.6f}]",
        fontsize=9,
    )
    fig.colorbar(image, ax=axes[2], shrink=0.8, label="γ*(w)")
    fig.suptitle(r"Problem 1 (max Tr $\mathcal{I}^{-1}$, C = [[1, .6], [0, 1]]): the densities that reach the supremum")
    save(fig, output / "problem1-maximisers.png")
    return (
        "problem1-maximisers.png",
        "Problem 1's maximising densities: on the box and the L-shape cos² on ever thinner rectangles along the "
        "(1, −1) chord (dashed) approach the supremum, a limit; on the disc an interior "
        "maximiser attains it and solves (11).",
    )
