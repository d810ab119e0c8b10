"""SQL text → :class:`~privnoise.sql.statement.Statement`, with sqlglot reading the dialect the caller speaks
(PostgreSQL, BigQuery, Spark SQL, DuckDB, …); every construct that cannot be answered privately is refused here,
before any data is read or budget charged, naming the construct, its position and why.

What is answered, and what each construct means for privacy:

==========================================  ====================================================================
construct                                    meaning
==========================================  ====================================================================
``COUNT(*)``, ``COUNT(col)``                 a noisy count of rows (of rows with a value in ``col``)
``COUNT(DISTINCT unit)``                     a noisy count of privacy units (the unit column only)
``SUM``, ``AVG``                             noisy sums and means of the column clamped to its declared bounds
``VAR_POP``/``VARIANCE``, ``STDDEV``         the population variance (its square root): noisy moments
``PERCENTILE_CONT(p) WITHIN GROUP (ORDER     a quantile by the exponential mechanism over the declared bounds
BY col)``, ``MEDIAN``, ``MIN``, ``MAX``      (``MIN`` and ``MAX`` are the 0- and 1-quantiles)
``WHERE`` comparisons, ``AND OR NOT``,       public row filters (:mod:`.filters`), no change of sensitivity
``IN``, ``BETWEEN``, ``IS NULL``, ``LIKE``
``GROUP BY`` columns                         declared keys, or keys released by partition selection
``HAVING``, ``ORDER BY``, ``LIMIT``,         post-processing of released values: no further cost
arithmetic on aggregates, aliases
==========================================  ====================================================================

Refused: joins, subqueries and common table expressions, set operations, window functions, ``SELECT DISTINCT``,
``*`` and columns outside ``GROUP BY`` (row-level values), expressions inside an aggregate, functions other than
the aggregates above.
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from .filters import column_of, predicate_of
from .options import read_options
from .positions import refuse, where_in
from .statement import (
    Aggregate,
    Arithmetic,
    Compare,
    Connective,
    Expression,
    KeyColumn,
    Number,
    Output,
    SqlError,
    Statement,
    Test,
)

__all__ = ["DIALECTS", "parse_statement"]

#: The dialects sqlglot reads that privnoise documents and tests (any sqlglot dialect name is accepted).
DIALECTS = ("postgres", "bigquery", "spark", "duckdb", "sqlite", "mysql")
MAX_LENGTH = 20_000
_ARITHMETIC: dict[type, str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/"}
_COMPARE: dict[type, str] = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_SIMPLE: dict[type, str] = {exp.Sum: "sum", exp.Avg: "mean", exp.Variance: "variance", exp.VariancePop: "variance",
                            exp.Stddev: "stddev", exp.StddevPop: "stddev", exp.StddevSamp: "stddev"}
_REASONS = {
    "joins": "JOIN: a record of one table may match many of another, so no sensitivity bounds the join's aggregates",
    "with": "WITH (a common table expression) builds a table of records; aggregate the table itself",
    "windows": "a window function (OVER) releases one value per record",
    "distinct": "SELECT DISTINCT releases the records' values",
}


def _arg(node: Any, name: str) -> Any:
    return node.args.get(name) if name in node.args else node.args.get(name + "_")


def parse_statement(text: Any, *, dialect: str | None = None) -> Statement:
    """The :class:`~privnoise.sql.statement.Statement` of ``text`` in ``dialect`` (module docstring).

    Raises
    ------
    SqlError
        Text that does not parse, or a construct that cannot be answered privately: its position and why.

    Examples
    --------
    >>> s = parse_statement("SELECT region, AVG(kwh) AS mean_kwh FROM meters WHERE kwh > 0 GROUP BY region")
    >>> s.table, s.group_by, [o.name for o in s.outputs], s.aggregates
    ('meters', ('region',), ['region', 'mean_kwh'], (Aggregate(kind='mean', column='kwh', q=None),))
    """
    if not isinstance(text, str) or not text.strip():
        raise SqlError(f"a statement is a non-empty string of SQL; got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise SqlError(f"a statement holds at most {MAX_LENGTH} characters; got {len(text)}")
    if dialect is not None and not isinstance(dialect, str):
        raise SqlError(f"`dialect` is a dialect name such as {', '.join(DIALECTS)}; got {dialect!r}")
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # one line break, as editors count lines
    blanked, options = read_options(text)
    try:
        trees = [t for t in sqlglot.parse(blanked, read=dialect) if t is not None]
    except sqlglot.errors.ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        raise SqlError(f"the statement does not parse: {first.get('description', str(exc)).split(chr(10))[0]}",
                       first.get("line"), first.get("col")) from None
    except (sqlglot.errors.TokenError, ValueError, KeyError) as exc:
        raise SqlError(f"the statement does not parse: {str(exc).splitlines()[0] if str(exc) else 'bad token'}") \
            from None
    if len(trees) != 1:
        raise SqlError(f"give one statement; got {len(trees)}")
    return _statement(text, trees[0], options, dialect)


def _statement(text: str, tree: Any, options: dict[str, Any], dialect: str | None) -> Statement:
    if not isinstance(tree, exp.Select):
        raise refuse(text, tree, f"{type(tree).__name__.upper()}: only SELECT statements with aggregates are answered")
    for key in ("with", "joins", "distinct"):
        if _arg(tree, key):
            found = _arg(tree, key)
            node = found[0] if isinstance(found, list) else found
            raise refuse(text, node if where_in(text, node)[0] else tree, _REASONS[key])
    for node in tree.walk():
        if isinstance(node, exp.Window):
            raise refuse(text, node, _REASONS["windows"])
        if node is not tree and isinstance(node, exp.Select | exp.Subquery | exp.Union | exp.Exists):
            raise refuse(text, node, "a subquery reads records; privnoise answers aggregates of one table")
        if isinstance(node, exp.Lateral | exp.Unnest):
            raise refuse(text, node, f"{type(node).__name__.upper()} produces records")
    source = _arg(tree, "from")
    if source is None or not isinstance(source.this, exp.Table) or not source.this.name:
        raise refuse(text, tree, "FROM names one table")
    table, alias = str(source.this.name), source.this.alias or None
    group: list[str] = []
    group_node = _arg(tree, "group")
    if group_node is not None:
        for g in group_node.expressions:
            if isinstance(g, exp.Literal) and not g.is_string:
                g = _positional(text, tree, g)
            group.append(column_of(text, g, table, alias))
        for extra in ("rollup", "cube", "grouping_sets"):
            if group_node.args.get(extra):
                raise refuse(text, group_node, f"GROUP BY {extra.upper().replace('_', ' ')} is not answered")
        if len(set(group)) != len(group):
            raise refuse(text, group_node, "GROUP BY names a column twice")
    reader = _Reader(text, table, alias, tuple(group), {}, dialect)
    outputs: list[Output] = []
    for item in tree.expressions:
        inner = item.this if isinstance(item, exp.Alias) else item
        if isinstance(inner, exp.Star) or (isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star)):
            raise refuse(text, item, "SELECT * releases records; select aggregates")
        expression = reader.expression(inner)
        name = str(item.alias) if isinstance(item, exp.Alias) else (
            expression.name if isinstance(expression, KeyColumn) else inner.sql(dialect=dialect))
        outputs.append(Output(_unique(name, outputs), expression))
    if not any(_has_aggregate(o.expression) for o in outputs):
        raise refuse(text, tree, "the select list holds no aggregate: a row-level SELECT releases records")
    reader.aliases.update({o.name: o.expression for o in outputs})
    where = _arg(tree, "where")
    predicates = () if where is None else (predicate_of(text, where.this, table, alias),)
    having_node = _arg(tree, "having")
    having = None if having_node is None else reader.test(having_node.this)
    order: list[tuple[Expression, bool]] = []
    order_node = _arg(tree, "order")
    if order_node is not None:
        for o in order_node.expressions:
            key = o.this
            if isinstance(key, exp.Literal) and not key.is_string:
                key = _positional(text, tree, key)
                key = key.this if isinstance(key, exp.Alias) else key
            order.append((reader.expression(key), bool(o.args.get("desc"))))
    limit = _count(text, _arg(tree, "limit"), "LIMIT")
    if _arg(tree, "offset") is not None:
        raise refuse(text, _arg(tree, "offset"), "OFFSET is not answered; ORDER BY and LIMIT are")
    return Statement(table=table, outputs=tuple(outputs), group_by=tuple(group), where=predicates, having=having,
                     order_by=tuple(order), limit=limit, options=options, text=text)


def _positional(text: str, tree: Any, literal: Any) -> Any:
    index = int(float(literal.this))
    if not 1 <= index <= len(tree.expressions):
        raise refuse(text, literal, f"position {index} is not a column of the select list")
    return tree.expressions[index - 1]


def _count(text: str, node: Any, word: str) -> int | None:
    if node is None:
        return None
    value = node.expression if node.expression is not None else node.this
    if not isinstance(value, exp.Literal) or value.is_string or not value.this.isdigit():
        raise refuse(text, node, f"{word} takes a non-negative integer")
    return int(value.this)


def _unique(name: str, outputs: list[Output]) -> str:
    taken = {o.name for o in outputs}
    found, i = name, 2
    while found in taken:
        found, i = f"{name}_{i}", i + 1
    return found


def _has_aggregate(expression: Expression) -> bool:
    if isinstance(expression, Aggregate):
        return True
    return isinstance(expression, Arithmetic) and (_has_aggregate(expression.left) or _has_aggregate(expression.right))


class _Reader:
    """Expressions of the select list, ``HAVING`` and ``ORDER BY``."""

    def __init__(self, text: str, table: str, alias: str | None, group: tuple[str, ...],
                 aliases: dict[str, Expression], dialect: str | None) -> None:
        self.text, self.table, self.alias, self.group, self.aliases = text, table, alias, group, aliases
        self.dialect = dialect

    def expression(self, node: Any) -> Expression:
        text = self.text
        if isinstance(node, exp.Paren):
            return self.expression(node.this)
        if isinstance(node, exp.Neg):
            return Arithmetic("-", Number(0.0), self.expression(node.this))
        if type(node) in _ARITHMETIC:
            return Arithmetic(_ARITHMETIC[type(node)], self.expression(node.this), self.expression(node.expression))
        if isinstance(node, exp.Literal):
            if node.is_string:
                raise refuse(text, node, f"the string {node.sql()} is not a value of the answer")
            return Number(float(node.this))
        if isinstance(node, exp.Column) and not node.table and node.name in self.aliases:
            return self.aliases[node.name]
        if isinstance(node, exp.Column):
            name = column_of(text, node, self.table, self.alias)
            if name not in self.group:
                raise refuse(text, node, f"column {name!r} is neither aggregated nor in GROUP BY: a row-level value")
            return KeyColumn(name)
        return self.aggregate(node)

    def aggregate(self, node: Any) -> Aggregate:
        text, written = self.text, node.sql(dialect=self.dialect)
        if isinstance(node, exp.Count):
            arg = node.this
            if isinstance(arg, exp.Star):
                return Aggregate("count", None, text=written)
            if isinstance(arg, exp.Distinct):
                if len(arg.expressions) != 1:
                    raise refuse(text, node, "COUNT(DISTINCT ...) counts one column: the privacy unit")
                return Aggregate("count_distinct", self.argument(arg.expressions[0], node), text=written)
            return Aggregate("count", self.argument(arg, node), text=written)
        if type(node) in _SIMPLE:
            return Aggregate(_SIMPLE[type(node)], self.argument(node.this, node), text=written)
        if isinstance(node, exp.Min | exp.Max):
            return Aggregate("quantile", self.argument(node.this, node), 0.0 if isinstance(node, exp.Min) else 1.0,
                             text=written)
        if isinstance(node, exp.Median):
            return Aggregate("quantile", self.argument(node.this, node), 0.5, text=written)
        if isinstance(node, exp.Quantile | exp.ApproxQuantile):
            return Aggregate("quantile", self.argument(node.this, node), self.level(node.args.get("quantile"), node),
                             text=written)
        if isinstance(node, exp.WithinGroup) and isinstance(node.this, exp.PercentileCont | exp.PercentileDisc):
            order = node.expression
            keys = order.expressions if isinstance(order, exp.Order) else []
            if len(keys) != 1:
                raise refuse(text, node, "WITHIN GROUP orders by one column")
            return Aggregate("quantile", self.argument(keys[0].this, node), self.level(node.this.this, node),
                             text=written)
        if isinstance(node, exp.AggFunc | exp.Func):
            raise refuse(text, node, f"{type(node).__name__.upper()} is not answered; the aggregates are COUNT, "
                                     "SUM, AVG, VAR_POP/VARIANCE, STDDEV, PERCENTILE_CONT, MEDIAN, MIN, MAX")
        raise refuse(text, node, f"{written!r} is not answered here")

    def argument(self, node: Any, call: Any) -> str:
        if node is None or isinstance(node, exp.Star):
            raise refuse(self.text, call, f"{call.sql()}: the aggregate needs a column")
        if not isinstance(node, exp.Column):
            raise refuse(self.text, call, f"{call.sql()}: an aggregate takes one column (bounds are declared per "
                                          "column); an expression inside an aggregate is not answered")
        return column_of(self.text, node, self.table, self.alias)

    def level(self, node: Any, call: Any) -> float:
        if not isinstance(node, exp.Literal) or node.is_string or not 0.0 <= float(node.this) <= 1.0:
            raise refuse(self.text, call, f"{call.sql()}: the level is a number in [0, 1]")
        return float(node.this)

    def test(self, node: Any) -> Test:
        if isinstance(node, exp.Paren):
            return self.test(node.this)
        if isinstance(node, exp.And | exp.Or):
            word = "and" if isinstance(node, exp.And) else "or"
            return Connective(word, (self.test(node.this), self.test(node.expression)))
        if isinstance(node, exp.Not):
            return Connective("not", (self.test(node.this),))
        if type(node) in _COMPARE:
            left, right = self.expression(node.this), self.expression(node.expression)
            if isinstance(left, KeyColumn) or isinstance(right, KeyColumn):
                raise refuse(self.text, node, "HAVING compares released numbers; choose groups by key in WHERE")
            return Compare(_COMPARE[type(node)], left, right)
        raise refuse(self.text, node, f"{node.sql()!r}: HAVING compares released values (= != < <= > >=) joined by "
                                      "AND, OR, NOT")
