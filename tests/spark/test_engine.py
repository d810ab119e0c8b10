"""The Spark engine: found for Spark data through the ``privnoise.engines`` entry points, a session over a Spark
DataFrame checks its columns and missing values before any charge, and ``pn.release`` takes one column of a
DataFrame (tests/spark/test_release.py)."""

from __future__ import annotations

import numpy as np
import pytest

import privnoise as pn
from privnoise.engines import engine_for, engine_names
from privnoise.exceptions import InvalidParameterError
from privnoise.spark import SPARK, SparkBackend


@pytest.fixture(scope="module")
def frame(spark) -> object:
    return spark.createDataFrame([(1, 2.0, "north"), (1, None, "south"), (2, 5.0, None)],
                                 "household long, kwh double, region string")


def test_spark_data_is_recognised_by_its_engine(frame) -> None:
    assert "pyspark" in engine_names()
    assert engine_for(frame) is SPARK and engine_for(frame["kwh"]) is SPARK
    assert engine_for(np.zeros(2)) is None
    assert isinstance(pn.Session(frame, epsilon=1.0)._backend, SparkBackend)  # noqa: SLF001 - the chosen backend


def test_releases_of_spark_data_take_one_column_of_a_dataframe(frame) -> None:
    q = pn.queries.mean(3, bounds=(0.0, 10.0))
    noise = pn.dp.laplace_for_epsilon(1.0, sensitivity=q.sensitivity("l1"))
    with pytest.raises(InvalidParameterError, match=r"not a column: frame.select\('kwh'\)"):
        pn.release(frame["kwh"], q, noise)
    with pytest.raises(InvalidParameterError, match="must be one column; got a Spark DataFrame with 3 columns"):
        pn.release(frame, q, noise)
    with pytest.raises(InvalidParameterError, match="must be a Spark DataFrame"):
        pn.Session(frame["kwh"], epsilon=1.0)


def test_a_spark_session_refuses_before_the_charge(frame) -> None:
    with pytest.raises(InvalidParameterError, match="`privacy_unit` of `Session` must be a column"):
        pn.Session(frame, privacy_unit="person", max_contributions=2, epsilon=1.0)
    s = pn.Session(frame, privacy_unit="household", max_contributions=2, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="missing values"):
        s.mean("kwh", bounds=(0, 10), epsilon=0.5)
    with pytest.raises(InvalidParameterError, match="compare it with a text literal"):
        s.where("region = 3")
    with pytest.raises(InvalidParameterError, match="must hold numbers"):
        s.sum("region", bounds=(0, 1), epsilon=0.5)
    assert s.remaining().epsilon == 1.0
    assert s.where(region="north").count(epsilon=0.5).query["where"] == "region = 'north'"
