"""The server's constant-work statements against the plain statements of the same queries, on SQLite, in one run.

Usage::

    python benchmarks/bench_server_statements.py [--records 100000] [--rounds 15]

A table of ``--records`` records (kWh in [0, 60] declared, a region among four declared categories, a tariff among
three) in an SQLite file. For each query, the statement the server's planner makes (every record weighted by its
filter's 0/1 indicator and tested against every cell: the same work whatever the filter selects, SECURITY.md
requirement 16) and the plain statement a database user would write (``WHERE`` and ``GROUP BY``: work that grows
with what the filter selects) are executed alternately; printed, the median time of each and their ratio.
Targets of the speed issue (printed, never asserted): ≤ 1.3× the plain statement.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from fractions import Fraction
from pathlib import Path

from sqlalchemy import MetaData, create_engine, insert

from privnoise.server.config import ColumnSpec, DatasetSpec, PolicySpec
from privnoise.server.db import data_table
from privnoise.server.planner import make_plan
from privnoise.server.querylang import parse_query

REGIONS = ("north", "south", "east", "west")
TARIFFS = ("standard", "economy7", "green")
QUERIES = [  # (the server's query, the plain statement)
    ("sum(kwh) where kwh > 10", "SELECT sum(min(60.0, max(0.0, kwh))), count(*) FROM d WHERE kwh > 10"),
    ("mean(kwh) where region = 'north'",
     "SELECT sum(min(60.0, max(0.0, kwh))), count(*) FROM d WHERE region = 'north'"),
    ("count() where region = 'north' and tariff = 'green'",
     "SELECT count(*) FROM d WHERE region = 'north' AND tariff = 'green'"),
    ("mean(kwh) where kwh > 10 group by region",
     "SELECT region, sum(min(60.0, max(0.0, kwh))), count(*) FROM d WHERE kwh > 10 GROUP BY region"),
    ("count() where region != 'east' group by region, tariff",
     "SELECT region, tariff, count(*) FROM d WHERE region != 'east' GROUP BY region, tariff"),
    ("histogram(kwh, bins = [0, 5, 10, 20, 60]) where tariff = 'standard'",
     "SELECT CASE WHEN kwh < 5 THEN 0 WHEN kwh < 10 THEN 1 WHEN kwh < 20 THEN 2 ELSE 3 END AS b, count(*) FROM d "
     "WHERE tariff = 'standard' GROUP BY b"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    columns = {
        "kwh": ColumnSpec("kwh", "number", (0.0, 60.0)),
        "region": ColumnSpec("region", "text", categories=REGIONS),
        "tariff": ColumnSpec("tariff", "text", categories=TARIFFS),
    }
    policies = {k: PolicySpec(k, "laplace", epsilon=Fraction(1, 2)) for k in ("count", "sum", "mean", "histogram")}
    spec = DatasetSpec("d", "d", None, Fraction(10), Fraction(1, 1000), columns, policies)
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        engine = create_engine(f"sqlite:///{Path(tmp) / 'bench.db'}")
        meta = MetaData()
        table = data_table("d", {c: s.type for c, s in columns.items()}, meta)
        meta.create_all(engine)
        rows = [{"pn_row": i, "kwh": rng.gammavariate(2.0, 5.0), "region": rng.choice(REGIONS),
                 "tariff": rng.choice(TARIFFS)} for i in range(args.records)]
        with engine.begin() as conn:
            conn.execute(insert(table), rows)
        print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; {args.records} records, SQLite "
              f"file, {args.rounds} alternating rounds (median)")
        print(f"{'query':70} {'server [ms]':>12} {'plain [ms]':>11} {'ratio':>7}")
        with engine.connect() as conn:
            for text, plain in QUERIES:
                plan = make_plan(parse_query(text), spec, table, records=args.records, dialect=engine.dialect)
                ours, theirs = [], []
                for _ in range(args.rounds):
                    start = time.perf_counter()
                    conn.exec_driver_sql(plan.sql, plan.parameters).all()
                    ours.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    conn.exec_driver_sql(plain).all()
                    theirs.append(time.perf_counter() - start)
                a, b = statistics.median(ours), statistics.median(theirs)
                print(f"{text:70} {1000 * a:12.1f} {1000 * b:11.1f} {a / b:6.2f}×")
        print(f"load average {os.getloadavg()[0]:.2f} after the runs")


if __name__ == "__main__":
    main()
