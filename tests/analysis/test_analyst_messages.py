"""What an analyst reads: the cap on a unit's rows said at construction, Fisher figures only when asked (in the
unit of the data), quantiles in plain numbers with a clear answer to ``confidence_interval``, clamping to the
declared bounds flagged (and counted privately when asked), group keys sorted and named in frames, empty and
clipped cells said as such."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import privnoise as pn
from privnoise.analysis.backend import InMemoryBackend
from privnoise.analysis.table import Table
from privnoise.exceptions import ContributionCapWarning, InvalidParameterError


def _data(units: int = 90, rows: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    unit = np.repeat(np.arange(units), rows)
    return {"id": unit, "species": np.array(["Gentoo", "Adelie", "Chinstrap"])[unit % 3],
            "mass": rng.normal(4200.0, 800.0, unit.size)}


# -- (3) the cap on a unit's rows ----------------------------------------------------------------------------------
class _Reads(InMemoryBackend):
    reads = 0

    def aggregate(self, request, rng):
        _Reads.reads += 1
        return super().aggregate(request, rng)

    def count_missing(self, column):
        _Reads.reads += 1
        return super().count_missing(column)


def test_a_privacy_unit_without_a_cap_warns_at_construction_reading_nothing() -> None:
    with pytest.warns(ContributionCapWarning, match=r"privacy_unit='id'\) without max_contributions: at most 1 row "
                                                    r"per unit is used .* max_contributions=k"):
        s = pn.Session(_Reads(Table(_data())), privacy_unit="id", epsilon=1.0)
    assert _Reads.reads == 0 and s.max_contributions == 1
    assert s.adjacency == "one unit of 'id' added or removed (at most 1 row per unit used)"
    summary = s.count(epsilon=0.5).summary()
    assert "(at most 1 row per unit used)" in summary and "1 rows" not in summary
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a cap given (even 1), or no unit: no warning
        pn.Session(_data(), privacy_unit="id", max_contributions=1, epsilon=1.0)
        three = pn.Session(_data(), privacy_unit="id", max_contributions=3, epsilon=1.0)
        pn.Session(_data(), epsilon=1.0)
    assert three.adjacency.endswith("(at most 3 rows per unit used)")
    with pytest.raises(InvalidParameterError, match="privacy_unit"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a bad unit column is refused before any warning
        pn.Session(_data(), privacy_unit="nope", epsilon=1.0)


# -- (6) Fisher figures only when asked ----------------------------------------------------------------------------
def test_dp_answers_state_the_fisher_bound_only_when_asked_in_the_unit_of_the_data() -> None:
    s = pn.Session(_data(), epsilon=10.0, rng=2)
    mean = s.mean("mass", bounds=(2500, 6500), epsilon=1.0)
    assert "Fisher" not in mean.summary() and "fisher_information_per_row" not in mean.as_dict()
    assert mean.fisher_information is not None  # still on the object
    b = mean.noise[0]["b"]
    line = mean.summary(fisher=True)
    assert f"standard deviation ≥ {b:.4g} (in the unit of mass; variance ≥ {b * b:.4g})" in line
    assert "even by someone who knows every other row" in line
    asked = mean.as_dict(fisher=True)
    assert asked["row_error_floor"] == pytest.approx(b * b) and asked["fisher"] == mean.fisher_line()
    assert s.count(epsilon=1.0).summary(fisher=True).count("Fisher") == 0  # a count has no Fisher bound


# -- (7) quantiles -------------------------------------------------------------------------------------------------
def test_quantiles_print_plain_numbers_and_explain_why_they_have_no_interval() -> None:
    s = pn.Session(_data(), epsilon=10.0, rng=3)
    one = s.quantile("mass", [0.5], bounds=(2500, 6500), epsilon=1.0)
    two = s.quantile("mass", [0.5, 0.9], bounds=(2500, 6500), epsilon=1.0)
    scalar = s.median("mass", bounds=(2500, 6500), epsilon=1.0)
    for release in (one, two, scalar):
        head = release.summary().split(";")[0] + ";" + release.summary().split(";")[1]
        assert "[" not in head, head  # no brackets around a value or a radius
    assert re.match(r"quantile: q = 0.5: [\d.]+ \(±[\d.]+ rows\) \(95% rank accuracy\)", one.summary())
    assert re.match(r"quantile: q = 0.5: [\d.]+ \(±[\d.]+ rows\), q = 0.9: [\d.]+ \(±[\d.]+ rows\)", two.summary())
    assert re.match(r"quantile: [\d.]+; 95% rank accuracy ±[\d.]+ rows", scalar.summary())
    with pytest.raises(InvalidParameterError, match=r"a quantile has no confidence interval in value units: .* "
                                                    r"which is private\. Use `accuracy\(alpha\)`"):
        one.confidence_interval()
    assert one.to_frame()["value"].size == 1  # no traceback either
    with pytest.raises(InvalidParameterError, match="selects categories and has no interval"):
        s.top_k("species", candidates=["Gentoo", "Adelie"], epsilon=1.0).confidence_interval()


# -- (8) clamping --------------------------------------------------------------------------------------------------
def test_answers_over_declared_bounds_say_their_values_were_clamped() -> None:
    s = pn.Session(_data(), epsilon=20.0, rng=4)
    mean = s.mean("mass", bounds=(3000, 4000), epsilon=2.0)
    note = ("values clamped to the declared bounds [3000, 4000]: the interval covers the statistic of the clamped "
            "values, not of the raw ones (Session.clamped_count counts the values outside the bounds privately")
    assert note in mean.summary() and note in mean.as_dict()["notes"][0]
    for release in (s.sum("mass", bounds=(0, 9000), epsilon=1.0), s.variance("mass", bounds=(0, 9000), epsilon=1.0),
                    s.group_by("species", keys=["Adelie"]).mean("mass", bounds=(0, 9000), epsilon=1.0)):
        assert "values clamped to the declared bounds [0, 9000]" in release.summary()
    assert "the accuracy is about the statistic of the clamped" in s.median("mass", bounds=(0, 9000),
                                                                           epsilon=1.0).summary()
    for release in (s.count(epsilon=1.0), s.clamped_count("mass", bounds=(0, 9000), epsilon=1.0)):
        assert release.as_dict()["notes"] == [] and "clamped to the declared" not in release.summary()


def test_clamped_count_counts_the_values_outside_the_bounds_privately() -> None:
    data = _data()
    s = pn.Session(data, privacy_unit="id", max_contributions=3, epsilon=1e6, rng=5)
    outside = int(np.sum((data["mass"] < 3000) | (data["mass"] > 4000)))
    found = s.clamped_count("mass", bounds=(3000, 4000), epsilon=1e5)
    assert abs(found.value - outside) <= 1 and found.query["query"] == "clamped count"
    assert found.query["bounds"] == [3000.0, 4000.0] and found.query["where"] == "(mass < 3000 or mass > 4000)"
    assert found.guarantee.epsilon == 1e5 and s.spent().epsilon == pytest.approx(1e5)  # charged as a count
    filtered = s.where(species="Gentoo").clamped_count("mass", bounds=(3000, 4000), epsilon=1e5)
    gentoo = data["species"] == "Gentoo"
    assert abs(filtered.value - int(np.sum(gentoo & ((data["mass"] < 3000) | (data["mass"] > 4000))))) <= 1
    with pytest.raises(InvalidParameterError, match="`bounds` of `clamped_count`"):
        s.clamped_count("mass", bounds=(4000, 3000), epsilon=1.0)


# -- (9) keys and frames -------------------------------------------------------------------------------------------
def test_selected_keys_come_back_sorted_and_frames_name_the_key_column() -> None:
    data = _data(units=600)  # the first rows are Gentoo, then Adelie, then Chinstrap: not sorted
    s = pn.Session(data, privacy_unit="id", max_contributions=3, epsilon=1e3, delta=1e-6, rng=6)
    selected = s.group_by("species").mean("mass", bounds=(2500, 6500), epsilon=50.0)
    assert selected.keys == ["Adelie", "Chinstrap", "Gentoo"] and selected.key_columns == ("species",)
    frame = selected.to_frame()
    assert list(frame.columns) == ["species", "value", "low", "high"] and list(frame["species"]) == selected.keys
    declared = s.group_by("species", keys=["Gentoo", "Adelie"]).count(epsilon=1.0)
    assert declared.keys == ["Gentoo", "Adelie"]  # declared keys keep their order
    json.dumps(selected.as_dict())
    assert selected.as_dict()["key_columns"] == ["species"]


# -- empty and clipped cells ---------------------------------------------------------------------------------------
def test_a_mean_whose_noisy_count_is_not_positive_says_no_estimate() -> None:
    data = _data()
    for seed in range(40):
        s = pn.Session(data, epsilon=10.0, rng=seed)
        means = s.group_by("species", keys=["Adelie", "Emperor"]).mean("mass", bounds=(2500, 6500), epsilon=0.5)
        if np.any(means.empty):
            break
    else:
        raise AssertionError("no seed gave a noisy count ≤ 0 for the absent key")
    assert means.empty.tolist() == [False, True]
    assert "Emperor: no estimate (noisy count ≤ 0)" in means.summary()
    assert dict(means.cells())["Emperor"] == "no estimate (noisy count ≤ 0)"
    assert means.as_dict()["empty"] == [False, True]


def test_a_statement_whose_selection_keeps_no_group_answers_no_row() -> None:
    s = pn.Session(_data(units=30), privacy_unit="id", max_contributions=3, epsilon=1.0, delta=1e-6, rng=7)
    answer = s.sql("SELECT species, COUNT(*) AS n, AVG(mass) AS m FROM t GROUP BY species", epsilon=0.05,
                   bounds={"mass": (2500, 6500)})
    assert answer.rows() == [] and list(answer.to_frame().columns)[:2] == ["species", "n"]


def test_a_group_by_that_selects_no_key_says_so() -> None:
    s = pn.Session(_data(units=30), privacy_unit="id", max_contributions=3, epsilon=1.0, delta=1e-6, rng=8)
    none = s.group_by("species").mean("mass", bounds=(2500, 6500), epsilon=0.05)
    assert none.keys == [] and re.match(r"group mean: no key selected \(no noisy count reached the threshold \d+\);",
                                         none.summary())
