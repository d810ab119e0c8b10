"""``privnoise design --support KIND:POINTS``: optimal noise on 2-D and 3-D supports from the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from privnoise.cli import app

pytest.importorskip("skfem")
runner = CliRunner()


def test_design_on_a_non_convex_polygon_with_a_matrix() -> None:
    result = runner.invoke(
        app,
        [
            "design",
            "--query",
            "identity",
            "--support",
            "polygon:0,0;2,0;2,1;1,1;1,2;0,2",
            "--matrix",
            "1,0.6;0,1",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["mechanism"]["family"] == "finite-element (polygon)"
    eigenvalue = payload["mechanism"]["parameters"]["discrete_eigenvalue"]
    assert payload["guarantee"]["fisher_information_trace"] == pytest.approx(
        4 * eigenvalue, rel=1e-9
    )  # Tr 𝓘 = 4λ


def test_design_on_a_matched_ball_uses_the_closed_form() -> None:
    result = runner.invoke(app, ["design", "--query", "identity", "--support", "ball:0,0,0;2", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["mechanism"]["family"] == "ellipsoidal (closed form)"
    info = np.array(payload["mechanism"]["fisher_information"])
    assert np.allclose(info, 4 * np.pi**2 / 3 / 4 * np.eye(3))  # (4π²/3)·S⁻¹ with S = 4I


@pytest.mark.parametrize(
    ("support", "matrix", "match"),
    [
        ("disc:0,0;1", None, "kind must be one of"),
        ("polygon:0,0;1,1;1,0;0,1.5", None, "simple polygon"),
        ("box:0,0;1", None, "finite|box|length"),
        ("polygon:0,0;1,0;0,x", None, "point 3"),
        ("ball:0,0;1", "1,0;0,1;1,1", "2 rows"),
        ("ball:0,0;1", "1,1;1,1", "row rank"),
    ],
)
def test_bad_supports_exit_2(support: str, matrix: str | None, match: str) -> None:
    args = ["design", "--query", "identity", "--support", support]
    if matrix is not None:
        args += ["--matrix", matrix]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.output.count("\n") <= 2
    import re

    assert re.search(match, result.output), result.output


def test_matrix_needs_a_named_support() -> None:
    result = runner.invoke(
        app, ["design", "--query", "mean", "--n", "3", "--support", "0,1", "--matrix", "1,0"]
    )
    assert result.exit_code == 2 and "--matrix goes with" in result.output
