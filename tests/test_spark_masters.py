"""One rule for the Spark masters every interface accepts: the command line's ``--master`` and a server dataset's
``master`` accept and refuse the same addresses, before Spark starts."""

from __future__ import annotations

import pytest

from privnoise._cli.errors import CliInputError
from privnoise._cli.spark_data import check_master

pytest.importorskip("pydantic")

from privnoise.server.datasets import DatasetSection  # noqa: E402

ACCEPTED = ["local", "local[2]", "local[*]", "local[4,3]", "local-cluster[2,1,1024]", "spark://host:7077",
            "spark://a:7077,b:7077", "k8s://https://api.example:443", "yarn"]
REFUSED = ["http://host", "local[]", "local[two]", "local-cluster[2,1]", "spark://", "k8s://host", "yarn ", ""]


def _section(master: str) -> DatasetSection:
    return DatasetSection.model_validate({"source": "parts/*.parquet", "epsilon": 1, "engine": "spark",
                                          "master": master, "columns": {"x": {"bounds": [0, 1]}}})


@pytest.mark.parametrize("master", ACCEPTED)
def test_every_interface_accepts_the_same_masters(master: str) -> None:
    assert check_master(master) == master
    assert _section(master).master == master


@pytest.mark.parametrize("master", REFUSED)
def test_every_interface_refuses_the_same_masters_naming_the_rule(master: str) -> None:
    with pytest.raises(CliInputError, match="local-cluster"):
        check_master(master)
    with pytest.raises(ValueError, match="must be a Spark master"):
        _section(master)
