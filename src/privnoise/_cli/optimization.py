"""The ``privnoise optimize`` command: private ridge regression by noisy gradient descent (Farokhi, Section III).

::

    privnoise optimize --dataset diabetes --noise-variance 0.1 --iterations 100
    privnoise optimize --dataset adult --adult-file adult.data --noise-variance 0.1 --radius 5 --json

Prints the trained model, its objective gap and guarantee, and with ``--plot`` draws the privacy–utility
trade-off over a sweep of the noise variance (the ``plots`` extra). ``--noise-variance`` is the variance
E‖w‖² of the gradient noise per iteration (Farokhi's ε, Theorem 1), not a differential-privacy ε: the (ε, δ)-DP
statement, when ``--radius`` makes one hold, is printed with the guarantee. ``register(app)`` adds the command
to a typer application; errors print one red line on stderr and exit with status 2. ``--seed`` is for research
reproducibility only.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .budget import LedgerOption, LedgerRequest, TotalDeltaOption, TotalEpsilonOption
from .errors import CliInputError, errors_exit_2
from .figures import plot_file

if TYPE_CHECKING:
    import numpy as np

__all__ = ["register"]


class Dataset(StrEnum):
    diabetes = "diabetes"
    adult = "adult"


def _plot(
    path: Path, problem: object, variances: np.ndarray, variance: float, iterations: int, seed: int | None
) -> None:
    import numpy as np

    from .. import optimization as po

    assert isinstance(problem, po.QuadraticProgram)
    opt = problem.solve().value
    gaps = np.array(
        [
            po.final_objectives(
                problem, noise_variance=e, iterations=iterations, replicas=200, rng=seed
            ).mean()
            - opt
            for e in variances
        ]
    )
    with plot_file(path) as ax:
        ax.loglog(
            1.0 / variances * problem.dim**2,
            np.maximum(gaps, 1e-300),
            "o-",
            label="mean objective gap (200 runs)",
        )
        ax.axvline(problem.dim**2 / variance, color="0.5", ls=":", label=f"noise variance {variance:g}")
        ax.set_xlabel("Tr I = n²/(noise variance) (Fisher information: lower is more private)")
        ax.set_ylabel("E f(x[T]) − min f (utility cost)")
        ax.set_title(f"Privacy–utility trade-off, {iterations} iterations")
        ax.grid(alpha=0.3, which="both")
        ax.legend()


def register(app: typer.Typer) -> None:
    """Add the ``optimize`` command to ``app``."""

    @app.command("optimize")
    @errors_exit_2
    def optimize_command(
        dataset: Annotated[Dataset, typer.Option("--dataset", help="Training data.")] = Dataset.diabetes,
        adult_file: Annotated[
            Path | None,
            typer.Option("--adult-file", metavar="PATH", help="Local adult.data (for --dataset adult)."),
        ] = None,
        noise_variance: Annotated[
            float,
            typer.Option(
                "--noise-variance",
                metavar="VAR",
                help="Variance E‖w‖² of the gradient noise per iteration (Farokhi's ε of Theorem 1; not a DP ε).",
            ),
        ] = 0.1,
        iterations: Annotated[int, typer.Option("--iterations", help="Number T of gradient steps.")] = 100,
        ridge: Annotated[
            float, typer.Option("--ridge", help="ρ of the cost (1/N)Σ(xᵀũ − z)² + ρ‖x‖².")
        ] = 0.5,
        radius: Annotated[
            float | None, typer.Option("--radius", help="Constrain ‖x‖ ≤ R; enables the (ε, δ)-DP statement.")
        ] = None,
        delta: Annotated[float, typer.Option("--delta", help="δ of the DP statement.")] = 1e-5,
        seed: Annotated[int | None, typer.Option("--seed", help="Research-only seed.")] = None,
        plot: Annotated[
            Path | None,
            typer.Option(
                "--plot", metavar="PATH", help="Draw the trade-off plot here (PNG; the plots extra)."
            ),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
        ledger_path: LedgerOption = None,
        total_epsilon: TotalEpsilonOption = None,
        total_delta: TotalDeltaOption = None,
    ) -> None:
        """Train a linear regression model privately and print its gap and guarantee.

        With --adult-file the training is recorded in the ledger (dataset: the file's resolved path) before anything
        is printed: the (ε, δ) of its DP statement (--radius) is charged to the file's total; without one it is a
        Fisher entry. The bundled diabetes data are public and not recorded.
        """
        import numpy as np
        from rich.console import Console
        from rich.table import Table

        from .. import optimization as po
        from .._optional import check

        if plot is not None:
            check("matplotlib", feature="privnoise optimize --plot")
        if dataset is Dataset.diabetes:
            check("sklearn", feature="privnoise optimize --dataset diabetes")

        ledger = LedgerRequest.from_options(ledger_path, None, total_epsilon, total_delta)
        given = [flag for flag, value in (("--ledger", ledger_path), ("--total-epsilon", total_epsilon),
                                          ("--total-delta", total_delta)) if value is not None]  # fmt: skip
        if dataset is Dataset.diabetes and given:
            raise CliInputError(
                f"{given[0]}: the diabetes data are public and not recorded in the ledger; the ledger records "
                "training on a user's file (--dataset adult --adult-file PATH)."
            )
        if dataset is Dataset.adult:
            if adult_file is None:
                raise CliInputError(
                    "--adult-file: the Adult data must be given as a local file (adult.data)."
                )
            from .inputs import reading, scan_text

            scan_text(adult_file)  # line lengths, NUL bytes, UTF-8: before a reader without bounds
            with reading(adult_file, quoted_values=True):  # its messages quote the entry at fault: redacted
                data = po.load_adult(adult_file)
        else:
            if adult_file is not None:
                raise CliInputError("--adult-file: only used with --dataset adult.")
            data = po.load_diabetes()
        bounds = (
            {"feature_bound": data.feature_bound, "label_bound": data.label_bound}
            if radius is not None
            else {}
        )
        model = po.private_linear_regression(
            data.features, data.labels, noise_variance=noise_variance, ridge=ridge, iterations=iterations, radius=radius,
            delta=delta, rng=seed, **bounds,
        )  # fmt: skip
        g = model.guarantee
        state = None
        if adult_file is not None:  # charged (or recorded) before any output, the plot included
            query = f"ridge regression ({iterations} iterations, noise variance {noise_variance:g})"
            details = {"fisher_trace": f"{g.fisher_trace:.6g}", "radius": radius, "ridge": ridge}
            if g.differential_privacy is not None:
                statement = g.differential_privacy  # ε computed in floating point: charged at its exact binary value
                state = ledger.charge(adult_file, command="privnoise optimize", query=query,
                                      epsilon=Fraction(statement.epsilon), delta=statement.delta, details=details)  # fmt: skip
            else:
                _, state = ledger.record(adult_file, kind="fisher", command="privnoise optimize", query=query,
                                         details=details)  # fmt: skip
        if plot is not None:
            v = noise_variance
            variances = np.logspace(np.log10(v) - 2, np.log10(v) + 2, 9) if v > 0 else np.logspace(-3, 1, 9)
            _plot(plot, model.problem, variances, v if v > 0 else 1.0, iterations, seed)
        payload = {
            "dataset": data.name,
            "records": data.records,
            "features": list(data.feature_names),
            "weights": model.weights.tolist(),
            "intercept": model.intercept,
            "objective": model.objective,
            "optimum": model.optimum,
            "objective_gap": model.objective_gap,
            "noise_variance": noise_variance,
            "guarantee": g.as_dict(),
            "plot": None if plot is None else str(plot),
        }
        if state is not None:
            from .budget import state_payload

            payload["ledger"] = state_payload(state)
        if as_json:
            sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
            return
        out = Console(highlight=False, soft_wrap=True)
        table = Table(
            title=f"Private ridge regression on {data.name} (N = {data.records}, noise variance {noise_variance:g}, "
            f"T = {iterations})"
        )
        table.add_column("feature")
        table.add_column("weight", justify="right")
        for name, w in zip(data.feature_names, model.weights, strict=True):
            table.add_row(name, f"{w:.6g}")
        table.add_row("(intercept)", f"{model.intercept:.6g}")
        out.print(table)
        out.print(f"objective f(x[T]) = {model.objective:.6g}; optimum min f = {model.optimum:.6g}; "
                  f"objective gap = {model.objective_gap:.6g}")  # fmt: skip
        out.print(f"Tr I = {g.fisher_trace:.6g} (n²/noise variance); Cramér–Rao bound on (Q, q) from the iterates = "
                  f"{g.cramer_rao_bound:.6g}; Proposition 1 bound = {g.proposition1_bound:.6g}")  # fmt: skip
        dp = g.differential_privacy
        out.print(f"differential privacy: {dp.summary() if dp is not None else 'none'} ({g.dp_note})")
        if plot is not None:
            out.print(f"trade-off plot: {plot}")
        if state is not None:
            out.print(state["line"], markup=False)
