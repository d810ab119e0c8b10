"""The ``privnoise recoverability`` command: maximum privacy π(ρ) and the optimal response for a query matrix.

::

    privnoise recoverability --matrix A.csv --rho 4
    privnoise recoverability --matrix A.csv --rho 4 --data-cov Sigma.csv --plot pi.png --json

``--plot`` (the ``plots`` extra) draws π(ρ) over ρ.

``register(app)`` adds the command to a typer application. Errors print one red line on stderr, exit status 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .errors import CliInputError, errors_exit_2, flag_aliases
from .figures import plot_file

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["read_matrix_csv", "register"]


_MAX_CELLS = 1_000_000


def read_matrix_csv(path: Path, option: str) -> NDArray[np.float64]:
    """A matrix of numbers from a CSV file (one row per line, comma-separated, no header; # comments).

    Lines are read within ``PRIVNOISE_MAX_LINE_BYTES``, rows within ``PRIVNOISE_MAX_COLUMNS`` entries, the whole
    within :data:`_MAX_CELLS` entries; an error names the option, the file, the line and the rule, never a value.
    """
    import numpy as np

    from ..io.limits import BoundedLines, check_file, limits

    bounds = limits()
    check_file(path)
    rows: list[list[float]] = []
    with open(path, "rb") as handle:
        lines = BoundedLines(handle, f"{option}: {path}", bounds)
        for text in lines:
            number = lines.number
            line = text.split("#", 1)[0].strip()
            if not line:
                continue
            if line.count(",") >= bounds.max_columns:
                raise CliInputError(
                    f"{option}: {path}, line {number}: more entries than {bounds.rule('max_columns')}."
                )
            row = []
            for position, cell in enumerate(line.split(","), start=1):
                try:
                    value = float(cell) if cell.strip().isascii() and "_" not in cell else float("x")
                except ValueError:
                    raise CliInputError(
                        f"{option}: {path}, line {number}: entry {position} is not a number."
                    ) from None
                if not np.isfinite(value):
                    raise CliInputError(
                        f"{option}: {path}, line {number}: entry {position} is not finite (NaN and inf are refused)."
                    )
                row.append(value)
            if rows and len(row) != len(rows[0]):
                raise CliInputError(
                    f"{option}: {path}, line {number}: {len(row)} entries where the rows above have {len(rows[0])}."
                )
            rows.append(row)
            if len(rows) * len(row) > _MAX_CELLS:
                raise CliInputError(f"{option}: {path} has more than {_MAX_CELLS:,} entries.")
    if not rows:
        raise CliInputError(f"{option}: {path} contains no numbers.")
    return np.array(rows, dtype=float)


def _num(value: float) -> str:
    return f"{value:.6g}"


def _plot(path: Path, matrix: NDArray[np.float64], rho: float, sigma: NDArray[np.float64] | None) -> None:
    import numpy as np

    from .. import recoverability as rec

    total = float(np.trace(matrix @ (np.eye(matrix.shape[1]) if sigma is None else sigma) @ matrix.T))
    top = max(1.25 * total, 1.1 * rho)
    grid = np.linspace(0.0, top, 401 if sigma is None else 81)
    values = rec.max_privacy(matrix, grid, data_cov=sigma)
    with plot_file(path) as ax:
        ax.plot(grid, values, lw=2, label="π(ρ)" + ("" if sigma is None else " (general Σ)"))
        ax.plot([rho], [rec.max_privacy(matrix, rho, data_cov=sigma)], "o", ms=7, label=f"ρ = {rho:g}")
        ax.axvline(total, color="0.6", ls=":", label="tr(AΣAᵀ) = var(AX)")
        ax.set_xlabel("recoverability level ρ = E‖AX − Z‖²")
        ax.set_ylabel("privacy π(ρ) = mmse(X | Z)")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
        ax.set_title("Maximum privacy under ρ-recoverability (Nageswaran)")


def register(app: typer.Typer) -> None:
    """Add the ``recoverability`` command to ``app``."""

    @app.command("recoverability")
    @errors_exit_2
    def recoverability_command(
        matrix: Annotated[
            Path, typer.Option("--matrix", metavar="A.csv", help="Query matrix A (CSV of numbers).")
        ],
        rho: Annotated[float, typer.Option("--rho", help="Recoverability level ρ >= 0: E‖AX − Z‖² ≤ ρ.")],
        data_cov: Annotated[
            Path | None,
            typer.Option("--data-cov", metavar="SIGMA.csv", help="Covariance of X (default: identity)."),
        ] = None,
        plot: Annotated[
            Path | None,
            typer.Option("--plot", metavar="PATH", help="Draw π(ρ) over ρ here (PNG; the plots extra)."),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    ) -> None:
        """Maximum privacy π(ρ) of a linear query AX and the optimal response (attenuation + Gaussian noise)."""
        import numpy as np
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        from .. import recoverability as rec
        from .._optional import check

        flag_aliases(A="--matrix", a="--matrix", sigma="--data-cov")
        if plot is not None:
            check("matplotlib", feature="privnoise recoverability --plot")

        a = read_matrix_csv(matrix, "--matrix")
        sigma = None if data_cov is None else read_matrix_csv(data_cov, "--data-cov")
        resp = rec.optimal_response(a, rho, data_cov=sigma)  # validates A, ρ and Σ before anything is drawn
        if plot is not None:
            _plot(plot, a, resp.rho, sigma)
        payload = {
            "shape": list(a.shape),
            "rank": int(rec.singular_values(a).size),
            "singular_values_ascending": rec.singular_values(a).tolist(),
            "data_cov": "identity" if sigma is None else "given",
            **resp.as_dict(),
            "plot": None if plot is None else str(plot),
        }
        if as_json:
            sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
            return
        out = Console(highlight=False, soft_wrap=True)
        m, n = a.shape
        out.print(
            f"[bold]Recoverability privacy[/bold] of A ({m} × {n}, rank {payload['rank']}), ρ = {resp.rho:g}"
        )
        out.print(
            f"π(ρ) = [bold green]{_num(resp.max_privacy)}[/bold green]  (maximum mmse(X | Z); tr Σ = "
            f"{_num(float(np.trace(resp.data_cov)))})"
        )
        summary = Table(title="Optimal response Z = F X + c + W", title_justify="left")
        summary.add_column("quantity")
        summary.add_column("value", justify="right")
        summary.add_row("recoverability error E‖AX − Z‖²", _num(resp.recoverability_error()))
        summary.add_row("privacy mmse(X | Z)", _num(resp.privacy()))
        summary.add_row("noise trace tr Q", _num(float(np.trace(resp.noise_covariance()))))
        if sigma is not None:
            summary.add_row("duality gap (certificate)", f"{resp.duality_gap:.2e}")
        out.print(summary)
        if resp.scheme is not None:
            sch = resp.scheme
            table = Table(
                title="Scheme (23)–(25): one row per singular value, ascending", title_justify="left"
            )
            for header in ("i", "sᵢ", "ρᵢ", "attenuation 1 − ρᵢ/sᵢ²", "noise std √(ρᵢ − ρᵢ²/sᵢ²)"):
                table.add_column(header, justify="right")
            for i, row in enumerate(
                zip(sch.singular_values, sch.allocation, sch.attenuation, sch.noise_std, strict=True), start=1
            ):
                table.add_row(str(i), *(_num(float(v)) for v in row))
            out.print(table)
            out.print("[dim]Z = Ũ D_a ŨᵀAX + Ũ D_no N, N ~ N(0, I_r) (Theorem 1, proven optimal).[/dim]")
        else:
            out.print(
                "[dim]General Σ: optimal over all responses (privnoise's extension, see "
                "privnoise.recoverability.general_covariance); computed with a duality-gap certificate.[/dim]"
            )
        if plot is not None:
            out.print(f"plot: {escape(str(plot))}")
