"""Rendering mechanisms and guarantees for the terminal (rich tables) and for JSON.

Large arrays are summarised: a constant vector as one value, a diagonal matrix by its diagonal, and in JSON
anything bigger than :data:`FULL_JSON_LIMIT` entries by its shape, trace and diagonal.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from rich.table import Table

from ..guarantees import FisherGuarantee, json_number
from ..mechanisms import Mechanism

__all__ = [
    "FULL_JSON_LIMIT",
    "goal_text",
    "guarantee_rows",
    "json_array",
    "mechanism_rows",
    "mechanism_summary",
    "num",
    "table",
    "text_array",
]

FULL_JSON_LIMIT = 4096

_FAMILIES = {
    "raised-cosine": "raised cosine (cos²), bounded support",
    "gaussian": "Gaussian, unbounded support",
    "laplace": "Laplace",
    "output-constrained-raised-cosine": "cos² on the output range Y (data-dependent policy)",
}

_SCOPES = {
    "all-data": "all-data (holds for every database)",
    "declared-domain": "declared-domain (worst case over the declared bounds)",
    "at-data": "at-data (computed at the data: do not publish beside the value)",
}


def num(value: float | None) -> str:
    """A number for people: 6 significant digits, ∞ for infinity, n/a for None."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return f"{value:.6g}"


def text_array(value: Any) -> str:
    """A compact text form of a scalar, vector or matrix."""
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        return num(float(a))
    if a.ndim == 1:
        if a.size > 1 and np.all(a == a[0]):
            return f"{num(float(a[0]))} (each of {a.size})"
        if a.size <= 6:
            return "[" + ", ".join(num(float(v)) for v in a) + "]"
        return f"{a.size} values in [{num(float(a.min()))}, {num(float(a.max()))}]"
    square = a.shape[0] == a.shape[1]
    diag = np.diag(a)
    if square and np.count_nonzero(a - np.diag(diag)) == 0:
        return "diagonal " + text_array(diag)
    if a.shape[0] <= 4 or (not square and a.shape[0] <= 8):  # small matrices and short point lists in full
        return "[" + "; ".join(" ".join(num(float(v)) for v in row) for row in a) + "]"
    if not square:
        return f"{a.shape[0]}×{a.shape[1]} array"
    return f"{a.shape[0]}×{a.shape[1]} matrix, trace {num(float(np.trace(a)))}"


def json_array(value: Any) -> Any:
    """A JSON-ready scalar or (nested) list; arrays beyond FULL_JSON_LIMIT entries as a summary dict."""
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        return json_number(float(a))
    if a.size <= FULL_JSON_LIMIT:
        return np.vectorize(json_number, otypes=[object])(a).tolist()
    summary: dict[str, Any] = {"shape": list(a.shape), "summarised": True}
    if a.ndim == 2:
        summary["trace"] = json_number(float(np.trace(a)))
        summary["diagonal"] = json_array(np.diag(a))
    return summary


def mechanism_summary(mechanism: Mechanism) -> dict[str, Any]:
    """Family, parameters and information measures of a mechanism, JSON-ready."""
    description = mechanism.describe()
    return {
        "family": description["family"],
        "parameters": {k: json_array(v) for k, v in description.items() if k != "family"},
        "mean": json_array(mechanism.mean()),
        "covariance": json_array(mechanism.covariance()),
        "second_moment": json_number(mechanism.second_moment()),
        "fisher_information": json_array(mechanism.fisher_information()),
        "entropy_nats": json_number(mechanism.entropy()),
    }


def family_text(family: str) -> str:
    return _FAMILIES.get(family, family)


def mechanism_rows(mechanism: Mechanism) -> list[tuple[str, str]]:
    """(quantity, value) rows describing a mechanism."""
    description = mechanism.describe()
    rows = [("noise family", family_text(description["family"]))]
    rows += [(f"parameter {k}", text_array(v)) for k, v in description.items() if k != "family"]
    rows += [
        ("mean", text_array(mechanism.mean())),
        ("covariance", text_array(mechanism.covariance())),
        ("quality Q = E‖w‖²", num(mechanism.second_moment())),
        ("Fisher information of the noise J", text_array(mechanism.fisher_information())),
        ("entropy", f"{num(mechanism.entropy())} nats"),
    ]
    return rows


def guarantee_rows(guarantee: FisherGuarantee) -> list[tuple[str, str]]:
    """(quantity, value) rows of a Fisher-information guarantee."""
    worst = guarantee.worst_record_bound
    crb = guarantee.cramer_rao_bound
    if crb is None:
        crb_text = "n/a (a declared Jacobian bound does not bound Tr 𝓘⁻¹)"
    elif math.isinf(crb):
        crb_text = "∞ (fewer outputs than records: no unbiased estimate of the whole database)"
    else:
        crb_text = num(crb)
    rms = "" if math.isinf(worst) else f" (RMS {num(math.sqrt(worst))})"
    return [
        ("privacy notion", guarantee.notion),
        ("scope", _SCOPES.get(guarantee.scope, guarantee.scope)),
        ("records n", str(guarantee.information.n)),
        ("Fisher information Tr 𝓘", num(guarantee.information.trace())),
        ("worst-record bound min_i 1/𝓘_ii", num(worst) + rms),
        ("trace bound 1/Tr 𝓘 (eq. 8)", num(guarantee.trace_bound)),
        ("Cramér–Rao bound Tr 𝓘⁻¹", crb_text),
        ("quality Q = E‖w‖²", num(guarantee.quality)),
    ]


def table(title: str, rows: list[tuple[str, str]]) -> Table:
    """A two-column rich table."""
    out = Table(title=title, title_justify="left", show_header=False, expand=False)
    out.add_column("quantity", style="bold", no_wrap=True)
    out.add_column("value", overflow="fold")
    for key, value in rows:
        out.add_row(key, value)
    return out


def goal_text(goal: dict[str, Any], variant: str = "corrected") -> str:
    """One line naming the design problem solved for ``goal`` (one optimal_noise keyword)."""
    ((key, value),) = goal.items()
    if key == "support" and hasattr(value, "describe"):  # a 2-D/3-D Support object
        kind = value.describe()["support"]
        return f"bounded noise on a {value.dim}-D {kind} (Problem 2 by Theorem 2's eigenproblem)"
    if key == "support":
        return f"bounded noise on W = [{value[0]:g}, {value[1]:g}] per output (Problem 2: cos², Cor. 1/3/5)"
    if key == "output_range":
        return f"release confined to Y = [{value[0]:g}, {value[1]:g}] (output constraint, data-dependent)"
    if key == "quality_weight":
        note = "printed Corollary 6, factor 2 (ERRATA 4)" if variant == "printed" else "corrected Corollary 6"
        return f"min Tr 𝓘 + ϱQ with ϱ = {value:g} (Problem 3, {note})"
    return f"min Tr 𝓘 subject to Q ≤ ϑ = {value:g} (Problem 4, Corollary 6)"
