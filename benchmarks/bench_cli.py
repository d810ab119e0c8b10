"""Start-up time of the ``privnoise`` command, against the bare interpreter in the same run.

Run: ``python benchmarks/bench_cli.py [repeats]``. Like hyperfine: each command runs as a fresh subprocess,
twice as warm-up, then ``repeats`` times (default 20); the table gives mean ± standard deviation, median and
minimum of the wall-clock time, and the ratio of the median to the bare interpreter's (``python -c pass``). The
commands: ``privnoise --help``; ``privnoise stream`` on a one-line file (design the noise from the building model,
add it to one reading, write the CSV and its sidecar); ``privnoise release`` of a DP mean of a 1,000-row CSV file
(read, check, bound, noise, charge the file's ledger, print); and, as references, ``import numpy`` and ``import
pandas`` (when pandas is installed). The load average is printed with the figures, since other work on the
machine skews them. Targets: 0.3 s for ``--help`` and for the one-line ``stream``, 0.4 s for the release; the
modules a release loads that it does not need (pandas, scipy, pyarrow.compute, sqlglot) are listed after the
table (none expected).
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = Path(sys.executable).with_name("privnoise")


def _time(args: list[str], *, stdin: bytes, repeats: int, cwd: Path) -> list[float]:
    times = []
    for k in range(repeats + 2):
        start = time.perf_counter()
        subprocess.run(
            args, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, check=True
        )
        if k >= 2:
            times.append(time.perf_counter() - start)
    return times


def main(repeats: int = 20) -> None:
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cases: list[tuple[str, list[str], bytes]] = [
            ("python -c pass (reference)", [python, "-c", "pass"], b""),
            ("python -c 'import numpy' (reference)", [python, "-c", "import numpy"], b""),
        ]
        if importlib.util.find_spec("pandas") is not None:
            cases.append(("python -c 'import pandas' (reference)", [python, "-c", "import pandas"], b""))
        model = str(ROOT / "examples" / "building.toml")
        rng = __import__("random").Random(7)
        (work / "small.csv").write_text("kwh\n" + "".join(f"{rng.uniform(2500, 6500):.3f}\n" for _ in range(1000)))
        cases += [
            ("privnoise --help", [str(COMMAND), "--help"], b""),
            (
                "privnoise stream (one-line file)",
                [
                    str(COMMAND),
                    "stream",
                    "--model",
                    model,
                    "--columns",
                    "co2",
                    "--sidecar",
                    str(work / "g.json"),
                ],
                b"time,co2\n0,410\n",
            ),
            (
                "privnoise release (DP mean, 1,000-row CSV)",
                [str(COMMAND), "release", "small.csv", "--column", "kwh", "--query", "mean", "--bounds",
                 "2500,6500", "--epsilon", "0.001"],
                b"",
            ),
        ]
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
              f"{repeats} runs each after 2 warm-up runs")  # fmt: skip
        print(f"{'command':42} {'mean ± sd [s]':>16} {'median':>8} {'min':>8} {'× pass':>8}")
        reference = None
        for name, args, stdin in cases:
            times = _time(args, stdin=stdin, repeats=repeats, cwd=work)
            median = statistics.median(times)
            reference = reference or median
            print(
                f"{name:42} {statistics.mean(times):8.3f} ± {statistics.stdev(times):5.3f} {median:8.3f} "
                f"{min(times):8.3f} {median / reference:8.1f}"
            )
        print(f"load average {os.getloadavg()[0]:.2f} after the runs")
        probe = ("import sys, runpy; sys.argv = ['privnoise', 'release', 'small.csv', '--column', 'kwh', '--query', "
                 "'mean', '--bounds', '2500,6500', '--epsilon', '0.001']\n"
                 "try:\n    runpy.run_module('privnoise.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
                 "print(sorted(m for m in ('pandas', 'scipy', 'pyarrow.compute', 'sqlglot') if m in sys.modules), "
                 "file=sys.stderr)")
        done = subprocess.run([python, "-c", probe], cwd=work, capture_output=True, text=True, check=False)
        print(f"modules a release loads without needing them: {done.stderr.strip().splitlines()[-1]}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
