"""The demo's household-level releases: a :class:`privnoise.Session` over the half-hourly readings.

Each household contributes every one of its readings (48 a day), so the privacy unit is the household, not the
reading: neighbouring datasets differ by one household's whole week, and every sensitivity is scaled by the
number of readings a household may contribute. These are readings in kWh per half hour — not the mean daily
consumption in kWh/day that the query server of the demo holds — clamped to the analyst's declared bounds
:data:`READING_BOUNDS`; how many readings those bounds clamp is itself released privately
(:meth:`~privnoise.analysis.Session.clamped_count`), never read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["BUDGET", "READING_BOUNDS", "household_releases"]

#: The analyst's session budget (ε, δ) in the demo.
BUDGET = (2.0, 1e-6)
#: The analyst's declared bounds of one half-hourly reading, kWh per half hour (a tighter range than the meter's
#: rating: sensitivities, hence the noise, scale with its width).
READING_BOUNDS = (0.0, 2.0)


def household_releases(readings_csv: Path, *, days: int, bounds: tuple[float, float]) -> list[dict[str, Any]]:
    """Mean, quantiles, a histogram, a per-region mean (keys found by partition selection), a count of the
    readings and a count of the readings outside ``bounds``, at the household level; each entry: the query, its
    value, guarantee and 95 % accuracy."""
    from ..analysis import Session

    session = Session(
        readings_csv, privacy_unit="household", max_contributions=48 * days, epsilon=BUDGET[0], delta=BUDGET[1]
    )
    low, high = bounds
    releases = {
        "mean(kwh)": session.mean("kwh", bounds=bounds, epsilon=0.5),
        "quantile(kwh, 0.5, 0.9)": session.quantile("kwh", [0.5, 0.9], bounds=bounds, epsilon=0.4),
        "histogram(kwh)": session.histogram("kwh", bins=[low, 0.1, 0.25, 0.5, 1.0, high], epsilon=0.25),
        "mean(kwh) group by region": session.group_by("region").mean("kwh", bounds=bounds, epsilon=0.5),
        "count()": session.count(epsilon=0.25),
        "clamped_count(kwh)": session.clamped_count("kwh", bounds=bounds, epsilon=0.1),
    }
    out = []
    for text, release in releases.items():
        described = release.as_dict(0.95)
        out.append({"query": text, "summary": release.summary(0.95), "details": described.pop("query")} | described)
    remaining = session.remaining()
    out.append({"query": "remaining()", "summary": f"ε left {remaining.epsilon:.6g}, δ left {remaining.delta:.3g}",
                "remaining": remaining.as_dict()})
    return out
