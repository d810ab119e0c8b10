"""The console's parts without a server: the query form built from the query language, the figures' numbers
against closed forms, the inline SVG under a strict CSP, paging, form parsing and CSV cells."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from privnoise.fisher import optimal_noise  # noqa: E402
from privnoise.queries import LinearQuery  # noqa: E402
from privnoise.server import querylang  # noqa: E402
from privnoise.server.config import ColumnSpec, DatasetSpec, PolicySpec  # noqa: E402
from privnoise.server.console import figures, queryform  # noqa: E402
from privnoise.server.console.guard import FormError, parse_form  # noqa: E402
from privnoise.server.console.owner import _cell  # noqa: E402
from privnoise.server.console.paging import sort_rows  # noqa: E402


def _spec(policies: tuple[str, ...] = querylang.KINDS) -> DatasetSpec:
    columns = {
        "kwh": ColumnSpec("kwh", "number", (0.0, 60.0)),
        "weight": ColumnSpec("weight", "number", (0.0, 2.0)),
        "region": ColumnSpec("region", "text"),
    }
    return DatasetSpec(
        "meters",
        "t",
        None,
        Fraction(10),
        Fraction(0),
        columns,
        {k: PolicySpec(k, "laplace", epsilon=Fraction(1, 10)) for k in policies},
    )


@pytest.mark.parametrize(
    "text",
    [
        "count() from meters",
        "sum(kwh) from meters where region = 'north'",
        "mean(kwh) from meters where kwh >= 20.0 and region != 'south'",
        "weighted_mean(kwh, weight) from meters",
        "variance(kwh) from meters where kwh < -1.5",
        "linear(2*kwh - 0.5*weight) from meters",
        "identity(kwh) from meters",
        "histogram(kwh, 0.0, 10.0, 60.0) from meters where region = 'north'",
        "histogram(region) from meters",
        "quantile(kwh, 0.25, 0.5) from meters",
    ],
)
def test_the_form_composes_what_the_parser_reads_and_the_ledger_text_reads_back(text: str) -> None:
    spec = querylang.parse_query(text)
    form = {"kind": spec.kind}
    for argument in querylang.ARGUMENTS[spec.kind].arguments:
        value = getattr(spec, argument.field)
        if argument.form == "terms":
            value = " + ".join(f"{c!r}*{n}" for n, c in value).replace("+ -", "- ")
        if argument.form == "numbers":
            value = ", ".join(repr(v) for v in value)
        form[f"arg_{argument.field}"] = value
    for i, c in enumerate(spec.where):
        form |= {f"where_column_{i}": c.column, f"where_op_{i}": c.op, f"where_value_{i}": str(c.value)}
    composed = queryform.compose(_spec(), form)
    assert querylang.parse_query(composed) == spec
    assert querylang.parse_query(queryform.describe_query(spec.as_dict())) == spec


def test_the_form_offers_the_kinds_with_a_policy_one_field_per_argument() -> None:
    spec = _spec(("mean", "count", "weighted_mean"))
    assert queryform.kinds_of(spec) == ["count", "mean", "weighted_mean"]  # the language's order
    form = queryform.kind_form(spec, "weighted_mean")
    assert [f.name for f in form.fields] == ["arg_column", "arg_weights"]
    assert form.fields[0].choices == ("kwh", "weight")  # numeric columns only
    assert queryform.kind_form(spec, "identity").where is False
    with pytest.raises(ValueError, match="choose a query kind among count, mean, weighted_mean"):
        queryform.compose(spec, {"kind": "sum", "arg_column": "kwh"})


def test_a_kind_added_to_the_language_appears_in_the_form_without_console_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    syntax = querylang.KindSyntax(
        (querylang.Argument("column", "column", "column"), querylang.Argument("levels", "numbers", "levels")),
        summary="quantiles",
    )
    monkeypatch.setitem(querylang.ARGUMENTS, "quantile", syntax)
    spec = _spec(("count", "quantile"))
    assert queryform.kinds_of(spec) == ["count", "quantile"]
    form = queryform.kind_form(spec, "quantile")
    assert [(f.name, f.choices) for f in form.fields] == [
        ("arg_column", ("kwh", "weight")),
        ("arg_levels", None),
    ]
    composed = queryform.compose(spec, {"kind": "quantile", "arg_column": "kwh", "arg_levels": "0.5, 0.9"})
    assert composed == "quantile(kwh, 0.5, 0.9) from meters"
    # a kind the table does not describe at all gets one free field for its arguments
    spec = _spec(("count",))
    spec.policies["median"] = PolicySpec("median", "laplace", epsilon=Fraction(1))
    assert queryform.kinds_of(spec) == ["count", "median"]
    assert [f.name for f in queryform.kind_form(spec, "median").fields] == ["arg_arguments"]
    assert queryform.compose(spec, {"kind": "median", "arg_arguments": "kwh"}) == "median(kwh) from meters"


def test_where_values_are_quoted_or_read_as_numbers_by_the_columns_type() -> None:
    spec = _spec()
    base = {"kind": "count", "where_column_0": "region", "where_op_0": "="}
    assert queryform.compose(spec, base | {"where_value_0": "it's"}).endswith("""region = "it's\"""")
    with pytest.raises(ValueError, match="both kinds of quotes"):
        queryform.compose(spec, base | {"where_value_0": "'\""})
    numeric = {"kind": "count", "where_column_0": "kwh", "where_op_0": ">"}
    with pytest.raises(ValueError, match="must be a number"):
        queryform.compose(spec, numeric | {"where_value_0": "north"})
    with pytest.raises(ValueError, match="finite"):
        queryform.compose(spec, numeric | {"where_value_0": "nan"})
    with pytest.raises(ValueError, match="operator"):
        queryform.compose(spec, numeric | {"where_op_0": "<>", "where_value_0": "1"})
    with pytest.raises(ValueError, match="takes no where clause"):
        queryform.compose(spec, numeric | {"kind": "identity", "arg_column": "kwh", "where_value_0": "1"})


def test_the_language_table_drives_the_parser() -> None:
    assert querylang.KINDS == tuple(querylang.ARGUMENTS)
    with pytest.raises(querylang.QueryError, match="weighted_mean needs a weight column"):
        querylang.spec_from_json({"kind": "weighted_mean", "column": "kwh"})
    with pytest.raises(querylang.QueryError, match="identity .* takes no where clause"):
        querylang.parse_query("identity(kwh) where kwh > 1")
    with pytest.raises(querylang.QueryError, match="expected ','"):
        querylang.parse_query("weighted_mean(kwh)")


@pytest.mark.parametrize("kind", ["sum", "mean", "identity"])
@pytest.mark.parametrize("mechanism", ["fisher-gaussian", "fisher-cosine"])
def test_the_tradeoff_points_match_the_closed_forms(kind: str, mechanism: str) -> None:
    """Gaussian noise of variance Q has 𝓘 = 1/Q; cos² on [−h, h] has 𝓘 = π²/h² (Farokhi & Sandberg, Problem 2)
    and E w² = h²(1/3 − 2/π²); a release with slope s gives a record s²𝓘, so its error floor is 1/(s√𝓘)."""
    records = 200
    slope = figures.release_slope(kind, records)
    assert slope == (1 / records if kind == "mean" else 1.0)
    query = LinearQuery(np.array([slope]))
    for q in (0.5, 25.0):
        if mechanism == "fisher-gaussian":
            noise = optimal_noise(query, quality_budget=q)
            information = 1.0 / q
        else:
            h = math.sqrt(q / (1 / 3 - 2 / math.pi**2))
            noise = optimal_noise(query, support=(-h, h))
            information = math.pi**2 / h**2
        rms, floor = figures.tradeoff_curve(query, [noise])
        assert rms[0] == pytest.approx(math.sqrt(q), rel=1e-9)
        assert floor[0] == pytest.approx(1.0 / (slope * math.sqrt(information)), rel=1e-6)
    # the Gaussian is the least informative noise of its variance: the highest floor at every RMS
    for q in (0.5, 25.0):
        h = math.sqrt(q / (1 / 3 - 2 / math.pi**2))
        _, gaussian = figures.tradeoff_curve(query, [optimal_noise(query, quality_budget=q)])
        _, cosine = figures.tradeoff_curve(query, [optimal_noise(query, support=(-h, h))])
        assert gaussian[0] > cosine[0]


def test_the_figures_are_inline_svg_that_a_strict_csp_allows() -> None:
    svg = figures.tradeoff_svg("meters", PolicySpec("sum", "fisher-cosine", half_width=0.5), 40)
    bound = figures.record_bound_svg("meters", "kwh", [0.0, 0.5, 0.25, 1.0], 0.01)
    empty = figures.record_bound_svg("meters", "kwh", [], None)
    for markup in (svg, bound, empty):
        assert markup.startswith("<svg") and "<?xml" not in markup and "<!DOCTYPE" not in markup
        assert not re.search(r"\sstyle=|<style|<script|\son[a-z]+=", markup)
        root = ET.fromstring(markup)
        ids = {e.get("id") for e in root.iter() if e.get("id")}
        refs = set(re.findall(r'(?:href="#|url\(#)([^")]+)', markup))
        assert ids == refs  # only ids something refers to are kept (several figures share a page)
        assert root.find("{http://www.w3.org/2000/svg}title") is not None
    assert "meters: sum" in svg and "floor 0.01" in bound


def test_the_record_bound_is_one_over_the_accumulated_information() -> None:
    information = [0.0, 0.5, 0.25, 1.0]
    total = np.cumsum(information)
    expected = [1 / t for t in total if t > 0]
    assert expected == pytest.approx([2.0, 1 / 0.75, 1 / 1.75])
    markup = figures.record_bound_svg("m", "kwh", information, None)
    assert "nothing released yet" not in markup
    assert "nothing released yet" in figures.record_bound_svg("m", "kwh", [0.0, 0.0], None)


def test_forms_are_parsed_strictly() -> None:
    assert parse_form(b"a=1&b=x+y&c=") == {"a": "1", "b": "x y", "c": ""}
    assert parse_form(b"") == {}
    for bad in (b"a=1&a=2", b"\xff=1", b"a=%00", b"&".join([b"x%d=1" % i for i in range(100)]), b"novalue"):
        with pytest.raises(FormError):
            parse_form(bad)


def test_csv_cells_never_start_a_formula() -> None:
    assert [_cell(v) for v in ("=1+1", "+1", "-1", "@x", "ok", 3)] == ["'=1+1", "'+1", "'-1", "'@x", "ok", 3]


def test_rows_sort_with_missing_values_last() -> None:
    rows = [{"a": 2}, {"a": None}, {"a": 1}, {"a": 2, "b": 1}]
    assert sort_rows(rows, "a", False) == [{"a": 1}, {"a": 2}, {"a": 2, "b": 1}, {"a": None}]
    assert sort_rows(rows, "a", True)[:2] == [{"a": 2}, {"a": 2, "b": 1}]


def test_the_package_ships_its_templates_and_static_files() -> None:
    import privnoise.server.console as console

    root = Path(console.__file__).parent
    shipped = {p.name for p in (root / "templates").iterdir()} | {p.name for p in (root / "static").iterdir()}
    assert {"base.html", "query.html", "answer.html", "console.css", "console.js", "favicon.svg"} <= shipped


def test_the_ledger_text_of_a_group_by_and_of_the_new_kinds_reads_back() -> None:
    for text in (
        "mean(kwh) from meters where kwh > 2.0 group by region",
        "count() from meters group by region, tariff, size",
        "histogram(kwh, bins = [0, 10, 60]) from meters",
        "quantile(kwh, [0.25, 0.75]) from meters",
    ):
        spec = querylang.parse_query(text)
        assert querylang.parse_query(queryform.describe_query(spec.as_dict())) == spec
