"""Private SQL: the time to read and check a statement beside the time to answer it, and the answer beside the same
session queries called directly, in one run.

Usage::

    python benchmarks/bench_sql.py [--rows 1000000] [--rounds 7]

Printed, never asserted: medians over interleaved rounds of

* planning: :func:`privnoise.sql.parse_statement` of each statement (sqlglot reads it, privnoise checks it);
* answering: ``Session.sql`` on a fresh session (planning, bounding, aggregation, noise, assembly);
* direct: the same releases through the session's methods (the SQL layer's own cost is answering − direct);
* the planning share of answering (the issue's target: a small fraction).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import privnoise as pn
from privnoise.sql import parse_statement

STATEMENTS = {
    "filtered group-by mean and count": (
        "SELECT region, AVG(kwh) AS m, COUNT(*) AS n FROM meters WHERE kwh > 1 AND region IN ('north', 'south') "
        "GROUP BY region ORDER BY m DESC",
        lambda s: (s.where("kwh > 1 and region in ('north', 'south')").group_by("region", keys=["north", "south"])
                   .mean("kwh", bounds=(0, 60), epsilon=0.5),
                   s.where("kwh > 1 and region in ('north', 'south')").group_by("region", keys=["north", "south"])
                   .count(epsilon=0.5)),
    ),
    "median, variance and sum": (
        "SELECT MEDIAN(kwh), VAR_POP(kwh), SUM(kwh) FROM meters WHERE kwh BETWEEN 0 AND 50",
        lambda s: (s.where("kwh >= 0 and kwh <= 50").median("kwh", bounds=(0, 60), epsilon=1 / 3),
                   s.where("kwh >= 0 and kwh <= 50").variance("kwh", bounds=(0, 60), epsilon=1 / 3),
                   s.where("kwh >= 0 and kwh <= 50").sum("kwh", bounds=(0, 60), epsilon=1 / 3)),
    ),
}


def _median_time(run: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    data = {"household": rng.integers(0, args.rows // 10, args.rows),
            "region": rng.choice(["north", "south", "east"], args.rows), "kwh": rng.gamma(2.0, 4.0, args.rows)}

    def fresh() -> pn.Session:
        return pn.Session(data, privacy_unit="household", max_contributions=10, epsilon=10.0)

    print(f"private SQL, {args.rows:,} rows, privacy unit with k = 10, medians of {args.rounds} rounds")
    print(f"{'statement':36} {'planning':>10} {'answering':>10} {'direct':>10} {'planning share':>15}")
    for name, (statement, direct) in STATEMENTS.items():
        plan = _median_time(lambda st=statement: parse_statement(st), args.rounds)
        answer = _median_time(lambda st=statement: fresh().sql(st, epsilon=1, bounds={"kwh": (0, 60)},
                                                              keys=["north", "south"] if "GROUP" in st else None),
                              args.rounds)
        calls = _median_time(lambda d=direct: d(fresh()), args.rounds)
        print(f"{name:36} {plan * 1e3:8.2f}ms {answer * 1e3:8.1f}ms {calls * 1e3:8.1f}ms {plan / answer:14.2%}")


if __name__ == "__main__":
    main()
