"""An in-process query server for the invariant tests, and an independent reference of what it must do.

``Lab`` writes an ``owner.toml`` with datasets whose declared bounds do not start at 0 and may be negative,
one dataset per (bounds, policy family); it creates the database, an admin key and queriers, and serves the app
in-process through Starlette's ``TestClient`` (no socket).

``NoiseSpy`` records every hardened release the server draws: the ``HardenedMechanism`` that sampled the noise
and the true value it was given. The tests judge those objects, not what the server says about them.

``reference_components`` recomputes, from the rows and the declared bounds alone, the components a query
releases: the true value, the true sensitivity (by enumerating neighbouring databases: one record added,
removed or replaced, each record a point of the declared box) and the sup over the declared domain of
|∂ component / ∂ x_i| per column (the slope whose square scales the noise's Fisher information).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from privnoise.mechanisms.hardening import HardenedMechanism
from privnoise.planning import Component as PlanComponent
from privnoise.server.budgets import dump_information, load_information

#: Declared bounds of the numeric column ``x`` (``y`` takes the next entry): none start at 0, some negative.
BOUNDS: tuple[tuple[float, float], ...] = (
    (10.0, 60.0),
    (-5.0, 3.0),
    (-60.0, -10.0),
    (0.25, 0.5),
    (-1000.0, 2.0),
)
#: Bounds of the weight column ``w`` (weights must be ≥ 0; none start at 0).
WEIGHT_BOUNDS: tuple[tuple[float, float], ...] = (
    (0.5, 2.0),
    (2.0, 3.0),
    (1.0, 1.5),
    (0.125, 4.0),
    (3.0, 7.0),
)
REGIONS = ("north", "south", "east")
N_ROWS = 12
KINDS = ("count", "sum", "mean", "weighted_mean", "variance", "linear", "identity")
FISHER_KINDS = ("sum", "mean", "linear", "identity")

#: Policy families: (ε of each kind as exact text, δ or None) for DP; (parameter) for Fisher.
DP_EPSILON = {
    "count": "1/20",
    "sum": "1/10",
    "mean": "1/10",
    "weighted_mean": "1/5",
    "variance": "3/10",
    "linear": "1/10",
    "identity": "1/2",
}
GAUSSIAN_DELTA = "1/1000000"
FAMILIES = ("laplace", "gaussian", "fisher-cosine", "fisher-gaussian")
FISHER_HALF_WIDTH = 1.0
FISHER_QUALITY = 0.5


def dataset_name(family: str, index: int) -> str:
    return f"{family.replace('-', '_')}_{index}"


def _rows(index: int) -> list[dict[str, Any]]:
    """N_ROWS records inside the declared bounds, the bounds themselves included."""
    lo, hi = BOUNDS[index]
    ylo, yhi = BOUNDS[(index + 1) % len(BOUNDS)]
    wlo, whi = WEIGHT_BOUNDS[index]
    rows = []
    for i in range(N_ROWS):
        t = (i * 5 % N_ROWS) / (N_ROWS - 1)  # a permutation of 0, 1/11, …, 1
        s = (i * 7 % N_ROWS) / (N_ROWS - 1)
        rows.append(
            {
                "x": lo + (hi - lo) * t,
                "y": ylo + (yhi - ylo) * s,
                "w": wlo + (whi - wlo) * ((i % 4) / 3),
                "region": REGIONS[i % len(REGIONS)],
            }
        )
    return rows


def _policies(family: str) -> str:
    out = []
    kinds = KINDS if family in ("laplace", "gaussian") else FISHER_KINDS
    for kind in kinds:
        out.append(f"[policies.{kind}]")
        out.append(f'mechanism = "{family}"')
        if family in ("laplace", "gaussian"):
            out.append(f'epsilon = "{DP_EPSILON[kind]}"')
        if family == "gaussian":
            out.append(f'delta = "{GAUSSIAN_DELTA}"')
        if family == "fisher-cosine":
            out.append(f"half_width = {FISHER_HALF_WIDTH!r}")
        if family == "fisher-gaussian":
            out.append(f"quality = {FISHER_QUALITY!r}")
    return "\n".join(out)


def _toml_value(v: Any) -> str:
    return json.dumps(v) if isinstance(v, str) else repr(v)


@dataclass
class DatasetDef:
    """One dataset of a lab: its name, rows, declared bounds per column, policies (TOML text), budgets."""

    name: str
    rows: list[dict[str, Any]]
    bounds: dict[str, tuple[float, float]]
    policies: str
    family: str
    epsilon: str = "1000000"
    delta: str = "1/2"
    fisher_floor: dict[str, float | None] = field(default_factory=dict)  # per column; default 1e-12
    categories: tuple[str, ...] | None = None  # declared values of the text column ``region``
    step_queries: dict[str, str] = field(default_factory=dict)  # per column: "allow" opens it to step queries
    texts: dict[str, tuple[str, ...] | None] = field(default_factory=dict)  # more text columns: their categories

    def toml(self) -> str:
        lines = [
            f"[datasets.{self.name}]",
            f'source = "{self.name}.csv"',
            f'epsilon = "{self.epsilon}"',
            f'delta = "{self.delta}"',
        ]
        for column, (lo, hi) in self.bounds.items():
            lines.append(f"[datasets.{self.name}.columns.{column}]")
            lines.append(f"bounds = [{lo!r}, {hi!r}]")
            floor = self.fisher_floor.get(column, 1e-12)
            if floor is not None:  # None: the column has no floor
                lines.append(f"fisher_floor = {_toml_value(floor)}")
            if column in self.step_queries:
                lines.append(f"step_queries = {_toml_value(self.step_queries[column])}")
        lines.append(f"[datasets.{self.name}.columns.region]")
        lines.append('type = "text"')
        if self.categories is not None:
            lines.append(f"categories = {json.dumps(list(self.categories))}")
        for column, values in self.texts.items():
            lines.append(f"[datasets.{self.name}.columns.{column}]")
            lines.append('type = "text"')
            if values is not None:
                lines.append(f"categories = {json.dumps(list(values))}")
        lines.append(self.policies.replace("[policies.", f"[datasets.{self.name}.policies."))
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        header = [*self.bounds, "region", *self.texts]
        body = [",".join(repr(float(r[c])) if c in self.bounds else r[c] for c in header) for r in self.rows]
        return "\n".join([",".join(header), *body]) + "\n"


def invariant_datasets() -> list[DatasetDef]:
    """Every (bounds, family) pair: the datasets of the invariant tests."""
    out = []
    for family in FAMILIES:
        for i, bounds in enumerate(BOUNDS):
            out.append(
                DatasetDef(
                    name=dataset_name(family, i),
                    rows=_rows(i),
                    bounds={"x": bounds, "y": BOUNDS[(i + 1) % len(BOUNDS)], "w": WEIGHT_BOUNDS[i]},
                    policies=_policies(family),
                    family=family,
                    # DP datasets answer filters on x and y: opened to step queries (their floor tracks the
                    # information of the differentiable answers only; tests/server/test_fisher_floor_steps.py)
                    step_queries={} if family.startswith("fisher-") else {"x": "allow", "y": "allow"},
                )
            )
    return out


class NoiseSpy:
    """Records every noise drawn by a plan's component (:meth:`privnoise.planning.Component.add`, the one drawing
    path of every answer): (the hardened mechanism that drew the noise, the true value)."""

    def __init__(self) -> None:
        self.draws: list[tuple[HardenedMechanism, np.ndarray]] = []

    @contextlib.contextmanager
    def installed(self) -> Iterator[NoiseSpy]:
        original = PlanComponent.add
        spy = self

        def add(self: PlanComponent[Any], values: Any, generator: Any) -> Any:
            spy.draws.append((self.noise, np.array(values, dtype=float, copy=True)))
            return original(self, values, generator)

        PlanComponent.add = add  # type: ignore[method-assign]
        try:
            yield self
        finally:
            PlanComponent.add = original  # type: ignore[method-assign]

    def take(self) -> list[tuple[HardenedMechanism, np.ndarray]]:
        out, self.draws = self.draws, []
        return out


class Lab:
    """An owner.toml with ``datasets``, its database, keys, and the app served in-process."""

    def __init__(self, root: Path, datasets: list[DatasetDef], *, server: str = "", database: str = "sqlite"):
        from privnoise.server import store
        from privnoise.server.config import load_config

        self.root = root
        self.datasets = {d.name: d for d in datasets}
        root.mkdir(parents=True, exist_ok=True)
        for d in datasets:
            (root / f"{d.name}.csv").write_text(d.csv(), encoding="utf-8")
        text = f'[server]\ndatabase = "{database}"\n{server}\n' + "".join(d.toml() for d in datasets)
        self.path = root / "owner.toml"
        self.path.write_text(text, encoding="utf-8")
        self.config = load_config(self.path)
        self.engine = store.init_database(self.config)
        admin = store.ensure_admin(self.engine, self.config)
        self.keys: dict[str, str] = {} if admin is None else {"admin": admin}
        self._stack = contextlib.ExitStack()

    def add_querier(self, name: str, *, epsilon: Any = "1000000", delta: Any = "1/2", **extra: Any) -> str:
        from privnoise.server import store

        key = store.create_querier(self.engine, self.config, name, epsilon=epsilon, delta=delta, **extra)
        self.keys[name] = key
        return key

    def __enter__(self) -> Lab:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*starlette.testclient.*deprecated")
            from fastapi.testclient import TestClient

        from privnoise.server.app import create_app

        self.app = create_app(self.config, engine=self.engine)
        self.http = self._stack.enter_context(TestClient(self.app, raise_server_exceptions=False))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        self.engine.dispose()

    def post(self, who: str, body: dict[str, Any]) -> Any:
        return self.http.post("/v1/queries", json=body, headers={"Authorization": f"Bearer {self.keys[who]}"})

    def get(self, who: str, url: str, **params: Any) -> Any:
        return self.http.get(url, params=params, headers={"Authorization": f"Bearer {self.keys[who]}"})

    def ledger_row(self, ledger_id: int) -> dict[str, Any]:
        rows = self.get("admin", "/v1/admin/ledger", limit=50).json()["ledger"]
        (row,) = [r for r in rows if r["id"] == ledger_id]
        return dict(row)


# --- the reference ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Component:
    """What one released component must be: its true value, true sensitivity and slopes per column."""

    name: str
    value: Any
    sensitivity: float
    slopes: dict[str, float]
    moved: int = 1  # the coordinates one record moves (a replaced record moves one value of an identity release)


def _clamp(v: float, bounds: tuple[float, float]) -> float:
    return min(max(v, bounds[0]), bounds[1])


def _matches(row: dict[str, Any], where: list[tuple[str, str, Any]], bounds: dict[str, Any]) -> bool:
    for column, op, literal in where:
        v = row[column] if column == "region" else _clamp(row[column], bounds[column])
        ok = {
            "=": v == literal,
            "!=": v != literal,
            "<": v < literal,
            "<=": v <= literal,
            ">": v > literal,
            ">=": v >= literal,
        }[op]
        if not ok:
            return False
    return True


def neighbour_sensitivity(g: Any, points: list[tuple[float, ...]]) -> float:
    """max over neighbouring databases of |Σ g(record) − Σ g(record')|: one record added or removed (|g(p)|)
    or replaced (|g(p) − g(q)|), every record a point of the declared box. ``points`` must contain the points
    where g attains its extremes (the corners of the box, and 0 for a square)."""
    values = [g(*p) for p in points]
    added = max(abs(v) for v in values)
    replaced = max(abs(a - b) for a, b in itertools.product(values, values))
    return max(added, replaced)


def _corners(*intervals: tuple[float, float]) -> list[tuple[float, ...]]:
    return list(itertools.product(*intervals))


def reference_components(
    dataset: DatasetDef,
    kind: str,
    *,
    column: str = "x",
    weights: str = "w",
    coefficients: tuple[tuple[str, float], ...] = (),
    where: list[tuple[str, str, Any]] | None = None,
) -> list[Component]:
    """The components of a query, in the order the server documents, computed from the rows alone."""
    where = where or []
    b = dataset.bounds
    fisher = dataset.family.startswith("fisher-")
    selected = [r for r in dataset.rows if _matches(r, where, b)]
    n_all = len(dataset.rows)

    def clamped(r: dict[str, Any], c: str) -> float:
        return _clamp(float(r[c]), b[c])

    count = Component("count", float(len(selected)), 1.0, {})
    if kind == "count":
        return [count]
    if kind == "linear":
        total: dict[str, float] = {}
        for c, a in coefficients:
            total[c] = total.get(c, 0.0) + a
        cols = list(total)

        def g(*p: float) -> float:
            return sum(total[c] * v for c, v in zip(cols, p, strict=True))

        value = sum(sum(total[c] * clamped(r, c) for c in cols) for r in selected)
        sens = neighbour_sensitivity(g, _corners(*(b[c] for c in cols)))
        return [Component("sum", value, sens, {c: abs(a) for c, a in total.items()})]
    lo, hi = b[column]
    xs = [clamped(r, column) for r in selected]
    big = max(abs(lo), abs(hi))
    total_sum = Component(
        "sum", sum(xs), neighbour_sensitivity(lambda v: v, _corners((lo, hi))), {column: 1.0}
    )
    if kind == "sum":
        return [total_sum]
    if kind == "mean" and fisher:
        # n is public for Fisher policies: neighbours replace one record.
        return [Component("mean", sum(xs) / n_all, (hi - lo) / n_all, {column: 1.0 / n_all})]
    # a DP mean or variance sums x − c and (x − c)², c the middle of the declared bounds (g over the declared box;
    # the square's extremes at the ends and at c)
    centre = (lo + hi) / 2.0
    centred = Component("sum", sum(v - centre for v in xs),
                        neighbour_sensitivity(lambda v: v - centre, _corners((lo, hi))), {column: 1.0})
    if kind == "mean":
        return [centred, count]
    if kind == "variance":
        squares = Component(
            "sum_of_squares",
            sum((v - centre) ** 2 for v in xs),
            neighbour_sensitivity(lambda v: (v - centre) ** 2, [(lo,), (hi,), (centre,)]),
            {column: hi - lo},
        )
        return [centred, squares, count]
    if kind == "weighted_mean":
        wlo, whi = b[weights]
        ws = [clamped(r, weights) for r in selected]
        weighted = Component(
            "weighted_sum",
            sum(w * v for w, v in zip(ws, xs, strict=True)),
            neighbour_sensitivity(lambda v, w: v * w, _corners((lo, hi), (wlo, whi))),
            {column: max(abs(wlo), abs(whi)), weights: big},
        )
        weight_sum = Component(
            "weight_sum", sum(ws), neighbour_sensitivity(lambda w: w, _corners((wlo, whi))), {weights: 1.0}
        )
        return [weighted, weight_sum]
    if kind == "identity":
        values = np.array([clamped(r, column) for r in dataset.rows])
        return [Component("values", values, hi - lo, {column: 1.0})]
    raise AssertionError(kind)


def realised_epsilons(
    draws: list[tuple[HardenedMechanism, np.ndarray]], components: list[Component], delta_each: float
) -> list[float]:
    """The ε each drawn noise gives at its component's true sensitivity (δ = ``delta_each`` for Gaussian noise),
    from the noise actually sampled and the exact profile with the grid rounding included."""
    from privnoise.dp import DiscreteLaplace, SnappedMechanism
    from privnoise.dp.profile import epsilon_delta_of
    from privnoise.mechanisms import Laplace
    from privnoise.mechanisms.hardening import hardened

    out = []
    for (h, _), comp in zip(draws, components, strict=True):
        if comp.sensitivity == 0.0:
            out.append(0.0)
            continue
        if isinstance(h, SnappedMechanism):  # the exact sum snapped (post-processing): the noise's own loss
            assert isinstance(h.mechanism, Laplace | DiscreteLaplace), h.mechanism  # Δ/b, or Δ/t on integer counts
            out.append(comp.sensitivity / float(np.min(h.mechanism.scale)))
            continue
        at_truth = hardened(
            h.mechanism, sensitivity=comp.sensitivity, bound=h.bound, grid_exponent=h.grid_exponent
        )
        delta = 0.0 if at_truth.pure else delta_each
        out.append(epsilon_delta_of(at_truth, sensitivity=comp.sensitivity, delta=delta,
                                    coordinates=comp.moved).epsilon)
    return out


def realised_deltas(
    draws: list[tuple[HardenedMechanism, np.ndarray]], components: list[Component], epsilon_each: float
) -> list[float]:
    """The δ each drawn noise gives at ε = ``epsilon_each`` and its component's true sensitivity."""
    from privnoise.mechanisms.hardening import hardened

    out = []
    for (h, _), comp in zip(draws, components, strict=True):
        at_truth = hardened(
            h.mechanism, sensitivity=comp.sensitivity, bound=h.bound, grid_exponent=h.grid_exponent,
            coordinates=comp.moved,
        )
        out.append(at_truth.delta(epsilon_each))
    return out


def noise_information(h: HardenedMechanism) -> float:
    """The largest per-coordinate location Fisher information of the noise actually drawn."""
    return float(np.max(np.diag(h.mechanism.fisher_information_matrix())))


def released_information(
    draws: list[tuple[HardenedMechanism, np.ndarray]], components: list[Component]
) -> dict[str, float]:
    """Per column: Σ over components of slope² · 𝓘(noise) (Farokhi & Sandberg, Proposition 1)."""
    out: dict[str, float] = {}
    for (h, _), comp in zip(draws, components, strict=True):
        if not comp.slopes:  # a count reads no column: it releases no information about a record's value
            continue
        info = noise_information(h)
        for column, slope in comp.slopes.items():
            out[column] = out.get(column, 0.0) + slope * slope * info
    return out


def fraction(text: str) -> Fraction:
    return Fraction(text)


def finite(value: Any) -> bool:
    return all(math.isfinite(float(v)) for v in np.ravel(value))


# --- stored budget state (in the storage format of privnoise.server.budgets) --------------------------------------


def _querier_id(conn: Any, name: str) -> int:
    from sqlalchemy import select

    from privnoise.server import db

    return int(conn.execute(select(db.queriers.c.id).where(db.queriers.c.name == name)).scalar_one())


def set_budget_state(
    engine: Any,
    dataset: str,
    *,
    querier: str | None = None,
    epsilon: Fraction | None = None,
    delta: Fraction | None = None,
    spent_epsilon: Fraction | None = None,
    spent_delta: Fraction | None = None,
    information: dict[str, float] | None = None,
    fisher_floor: float | None = None,
) -> None:
    """Write the stored budget of ``dataset`` (the dataset's own with ``querier=None``, else the querier's)."""
    from sqlalchemy import update

    from privnoise.server import db

    values: dict[str, Any] = {}
    if epsilon is not None:
        values["epsilon"] = str(epsilon)
    if delta is not None:
        values["delta"] = str(delta)
    if spent_epsilon is not None:
        values["spent_epsilon"] = str(spent_epsilon)
    if spent_delta is not None:
        values["spent_delta"] = str(spent_delta)
    if information is not None:
        values["fisher_information"] = dump_information({k: Fraction(v) for k, v in information.items()})
    if fisher_floor is not None:
        values["fisher_floor"] = fisher_floor
    with engine.begin() as conn:
        if querier is None:
            conn.execute(update(db.datasets).where(db.datasets.c.name == dataset).values(**values))
        else:
            qid = _querier_id(conn, querier)
            conn.execute(
                update(db.budgets)
                .where(db.budgets.c.querier_id == qid, db.budgets.c.dataset == dataset)
                .values(**values)
            )


def _parsed(row: Any) -> dict[str, Any]:
    info = load_information(row["fisher_information"])
    return {
        "epsilon": Fraction(row["spent_epsilon"]),
        "delta": Fraction(row["spent_delta"]),
        "fisher": info.get("x", Fraction(0)),
        "information": info,
    }


def read_budget_state(engine: Any, dataset: str) -> dict[str, Any]:
    """What is stored of ``dataset``'s budgets: {"dataset": spent, "queriers": {name: spent}}."""
    from sqlalchemy import select

    from privnoise.server import db

    with engine.connect() as conn:
        d = conn.execute(select(db.datasets).where(db.datasets.c.name == dataset)).mappings().one()
        rows = (
            conn.execute(
                select(db.budgets, db.queriers.c.name)
                .join(db.queriers, db.queriers.c.id == db.budgets.c.querier_id)
                .where(db.budgets.c.dataset == dataset)
            )
            .mappings()
            .all()
        )
    return {"dataset": _parsed(d), "queriers": {r["name"]: _parsed(r) for r in rows}}
