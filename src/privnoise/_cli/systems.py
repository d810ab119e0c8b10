"""The ``privnoise stream`` command: add designed output noise to a sensor time series, window by window.

::

    privnoise stream --model building.toml --columns co2 --input readings.csv --output noisy.csv
    privnoise stream --model building.toml --delta 0.1 < readings.csv > noisy.csv
    privnoise stream --model building.toml --guarantee-header < readings.csv > noisy.csv

Model file (TOML, read with :mod:`tomllib`; see ``examples/building.toml``):

* ``[system]``: ``A``, ``B``, ``C`` and optionally ``D`` (nested lists);
* ``[privacy]``: ``horizon`` (t; windows of t+1 readings), ``delta`` (``--delta`` overrides it) and ``c`` (W₂
  adjacency radius; optional when two ``[[inputs]]`` laws are given, then c is their W₂ distance over t+1 samples);
* ``[x0]``: optional public law of x₀ (``mean``, ``cov``), which selects Theorem III.5 (else Corollary III.4);
* ``[[inputs]]``: optional i.i.d. input laws (``name``, ``mean``, ``var``).

Input: a CSV of sensor readings, one time step per line, e.g. ``time,co2`` then ``0,410``, ``1,412``, ….
Leading ``#`` lines are copied; a header line (detected as a first line none of whose fields is a number, or forced
with ``--header`` / ``--no-header``) is copied. ``--columns`` selects the q sensor columns that receive noise
(q = rows of C; header names or 0-based indices, comma-separated, in the order of the model's outputs); without
it every column is noised, which needs exactly q fields per line, else the command stops and lists the header.
Every other column (timestamps, ids) is copied unchanged and in place; noisy values are written as round-trip
floats. Every data line must hold finite readings in the selected columns: a malformed line stops the command with
its line number and column (exit status 2); no reading is skipped. The output is a plain CSV that pandas and
polars read as it is. The guarantee goes to a JSON sidecar: ``--sidecar PATH``, by default ``NOISY.guarantee.json``
beside ``--output NOISY.csv`` or ``stream.guarantee.json`` in the working directory when writing to stdout; with
``--guarantee-header`` it goes to a first ``# privnoise guarantee: {...}`` line of the output instead (read it
with ``pandas.read_csv(..., comment="#")``).
"""

from __future__ import annotations

import json
import logging
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any

import typer

from ..exceptions import PrivnoiseError
from .budget import DatasetOption, LedgerOption, LedgerRequest
from .errors import CliInputError, err_console, errors_exit_2, verbosity
from .inputs import bounded_lines, reading, redact

if TYPE_CHECKING:
    from ..systems import StatisticalInputNoise

__all__ = ["default_sidecar", "load_model", "register", "stream_command"]

log = logging.getLogger("privnoise.cli")

#: Where the guarantee goes when the noisy readings go to stdout and no --sidecar is given.
STDOUT_SIDECAR = Path("stream.guarantee.json")


def default_sidecar(output: Path | None) -> Path:
    """``NOISY.guarantee.json`` beside ``--output NOISY.csv``; :data:`STDOUT_SIDECAR` for stdout.

    >>> default_sidecar(Path("out/noisy.csv")).as_posix(), default_sidecar(None).as_posix()
    ('out/noisy.guarantee.json', 'stream.guarantee.json')
    """
    return STDOUT_SIDECAR if output is None else output.with_suffix(".guarantee.json")


def _section(data: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    value = data.get(name)
    if not isinstance(value, dict):
        raise CliInputError(f"{path}: the model needs a [{name}] table.")
    return value


def _key(table: Any, key: str, where: str) -> Any:
    if not isinstance(table, dict):
        raise CliInputError(f"{where}: must be a table of keys.")
    if key not in table:
        raise CliInputError(f"{where}: missing key {key!r}.")
    return table[key]


def load_model(path: Path, *, delta: float | None = None) -> StatisticalInputNoise:
    """Read a model file and design its noise (Theorem III.5 with a public [x0], else Corollary III.4).

    The file is read whole within ``PRIVNOISE_MAX_FILE_BYTES``; a value of the wrong kind (text for a matrix, a
    list for a number) is one line naming the file.
    """
    from ..io.limits import read_text_file

    try:
        data = tomllib.loads(read_text_file(path, "model file"))
    except tomllib.TOMLDecodeError as exc:  # its message gives the line and column, never the text
        raise CliInputError(f"{path}: not valid TOML ({exc}).") from None
    try:
        return _design(data, path, delta)
    except PrivnoiseError as exc:  # named after the file, without the value at fault (which it holds)
        message = redact(str(exc))
        raise type(exc)(message if message.startswith(str(path)) else f"{path}: {message}") from None
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        raise CliInputError(f"{path}: a value of the model has the wrong type or shape ({type(exc).__name__}).") from None


def _design(data: dict[str, Any], path: Path, delta: float | None) -> StatisticalInputNoise:
    from ..systems import GaussianInput, StateSpace, statistical_input_noise, wasserstein2

    s = _section(data, "system", path)
    system = StateSpace(
        A=_key(s, "A", f"{path} [system]"),
        B=_key(s, "B", f"{path} [system]"),
        C=_key(s, "C", f"{path} [system]"),
        D=s.get("D"),
    )
    p = _section(data, "privacy", path)
    horizon = _key(p, "horizon", f"{path} [privacy]")
    d = delta if delta is not None else p.get("delta")
    if d is None:
        raise CliInputError(f"{path}: give delta in [privacy] or --delta.")
    laws = data.get("inputs", [])
    c = p.get("c")
    if laws:
        if not isinstance(laws, list) or len(laws) != 2:
            raise CliInputError(f"{path}: [[inputs]] must list exactly two input laws; got {len(laws)}.")
        steps = int(horizon) + 1 if isinstance(horizon, int) else 1
        u = [
            GaussianInput.iid(
                mean=_key(law, "mean", f"{path} [[inputs]]"),
                var=_key(law, "var", f"{path} [[inputs]]"),
                steps=steps,
            )
            for law in laws
        ]
        distance = wasserstein2(u[0], u[1])
        if c is None:
            c = distance
        elif float(c) < distance:
            raise CliInputError(
                f"{path}: c = {c} is smaller than the W2 distance {distance:.6g} of the two [[inputs]] laws over "
                f"{steps} samples; the laws would not be c-adjacent."
            )
    if c is None:
        raise CliInputError(f"{path}: give c in [privacy] or two [[inputs]] laws.")
    x0 = data.get("x0")
    x0_law = None
    if x0 is not None:
        x0_law = GaussianInput(mean=_key(x0, "mean", f"{path} [x0]"), cov=_key(x0, "cov", f"{path} [x0]"))
    return statistical_input_noise(system, horizon=horizon, c=c, delta=d, x0_public=x0_law)


class _Counting:
    """Iterates over a text handle, counting characters (for the progress bar)."""

    def __init__(self, lines: Iterator[str]) -> None:
        self.lines = lines
        self.chars = 0

    def __iter__(self) -> Iterator[str]:
        for line in self.lines:
            self.chars += len(line)
            yield line


def _run(
    handle: Iterator[str],
    sink: IO[str],
    noise: StatisticalInputNoise,
    *,
    name: str,
    preamble: str,
    columns: str | None,
    header: bool | None,
    seed: int | None,
    total: int | None,
) -> int:
    from ..systems.streaming import stream_csv

    counter = _Counting(handle)
    options: dict[str, Any] = {
        "rng": seed,
        "columns": columns,
        "header": header,
        "preamble": preamble,
        "source_name": name,
    }
    if total is None:
        return stream_csv(counter, sink, noise, **options)
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    with Progress(
        TextColumn("stream"), BarColumn(), DownloadColumn(), console=err_console(), transient=True
    ) as bar:
        task = bar.add_task("stream", total=total)
        return stream_csv(
            counter, sink, noise, progress=lambda _: bar.update(task, completed=counter.chars), **options
        )


@errors_exit_2
def stream_command(
    model: Annotated[
        Path, typer.Option("--model", help="Model file (TOML): system, horizon, c or input laws, delta.")
    ],
    delta: Annotated[
        float | None, typer.Option("--delta", help="Target delta of (0, delta)-DP (overrides the model).")
    ] = None,
    input_path: Annotated[
        Path | None, typer.Option("--input", help="Readings file (default: stdin).")
    ] = None,
    output_path: Annotated[
        Path | None, typer.Option("--output", help="Noisy readings file (default: stdout).")
    ] = None,
    sidecar: Annotated[
        Path | None,
        typer.Option(
            "--sidecar",
            metavar="PATH",
            help="Write the guarantee (JSON) here (default: NOISY.guarantee.json beside --output NOISY.csv, "
            "or stream.guarantee.json when writing to stdout).",
        ),
    ] = None,
    guarantee_header: Annotated[
        bool,
        typer.Option(
            "--guarantee-header",
            help="Put the guarantee in a first '# privnoise guarantee: {...}' line of the output instead of a "
            "sidecar (read it with pandas.read_csv(..., comment='#')).",
        ),
    ] = False,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns",
            help="The q sensor columns to noise, comma-separated header names or 0-based indices, in the "
            "order of the model's outputs (default: all columns, if there are q). Others are copied.",
        ),
    ] = None,
    header: Annotated[
        bool | None,
        typer.Option(
            "--header/--no-header",
            help="Whether the first line is a header of column names (default: detected, a header has no "
            "numeric field).",
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="RESEARCH ONLY: seeded noise is predictable.")
    ] = None,
    ledger_path: LedgerOption = None,
    dataset: DatasetOption = None,
) -> None:
    """Add (0, delta)-DP output noise (Liu, Kawano & Cao) to a sensor time series, window by window.

    The output is a plain CSV (pandas and polars read it as it is); the guarantee goes to a JSON sidecar. The
    stream is recorded in the ledger (dataset: --dataset NAME, else the --input file) before any reading is
    written; it charges no (ε, δ) of the records, its (0, delta) being about the input law (another
    adjacency).
    """
    if guarantee_header and sidecar is not None:
        raise CliInputError("give either --sidecar or --guarantee-header, not both.")
    noise = load_model(model, delta=delta)
    if input_path is not None:  # before the ledger records anything
        from ..io.limits import check_file

        check_file(input_path, regular=False)  # a pipe (process substitution) is read once: allowed
    ledger = LedgerRequest.from_options(ledger_path, dataset)
    entry = None
    if input_path is None and dataset is None:
        log.info("readings from stdin are not recorded in the ledger; give --dataset NAME to record them")
    else:
        entry, _ = ledger.record(
            input_path, kind="input-law", command="privnoise stream",
            query=f"stream (model {model.name}" + ("" if columns is None else f", columns {columns}") + ")",
            details={"delta_per_window": noise.delta, "window": noise.window, "theorem": noise.theorem,
                     "c": noise.c, "sigma": noise.sigma, "model": str(model)},
        )  # fmt: skip
    guarantee = noise.as_dict() | {"model": str(model)}
    if seed is not None:
        log.warning("--seed makes the noise reproducible and predictable; research only.")
    sidecar_path = None if guarantee_header else (sidecar or default_sidecar(output_path))
    preamble = (
        "# privnoise guarantee: " + json.dumps(guarantee, ensure_ascii=False) + "\n"
        if guarantee_header
        else ""
    )
    quiet = verbosity() < 0
    name = str(input_path) if input_path is not None else "<stdin>"
    source = input_path.open("rb") if input_path is not None else sys.stdin
    try:
        sink = output_path.open("w", encoding="utf-8") if output_path is not None else sys.stdout
        try:
            bar = (input_path is not None and not quiet and sys.stderr.isatty()  # never in a log file
                   and err_console().is_terminal)
            total = input_path.stat().st_size if bar and input_path is not None else None
            with reading(name, quoted_values=True):  # the stream's messages quote lines: redacted
                count = _run(
                    bounded_lines(source, name),
                    sink,
                    noise,
                    name=name,
                    preamble=preamble,
                    columns=columns,
                    header=header,
                    seed=seed,
                    total=total,
                )
        finally:
            if output_path is not None:
                sink.close()
    finally:
        if input_path is not None:
            source.close()
    if entry is not None:
        ledger.add_details(entry, {"readings": count})
    if sidecar_path is not None:
        sidecar_path.write_text(
            json.dumps(guarantee | {"readings": count}, indent=2, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
    log.info(
        "%d reading(s) noised in windows of %d (Theorem %s, sigma = %.6g, delta = %g per window); guarantee: %s",
        count,
        noise.window,
        noise.theorem,
        noise.sigma,
        noise.delta,
        "header line of the output" if sidecar_path is None else sidecar_path,
    )


def register(app: typer.Typer) -> None:
    """Add the ``stream`` command to ``app``."""
    app.command("stream")(stream_command)
