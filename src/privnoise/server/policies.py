"""The policies of a dataset: which mechanism answers each query kind, with its parameters.

:class:`PolicySpec` is a validated ``[datasets.NAME.policies.KIND]`` table of ``owner.toml`` (see
:mod:`.config` and ``docs/server.md``); :class:`PolicySection` is its schema. What each mechanism requires and
answers is the table :data:`.mechanism_rules.RULES` (the kinds: :data:`~.mechanism_rules.NOISE_ONLY_KINDS`,
:data:`~.mechanism_rules.FISHER_KINDS` and :data:`~.mechanism_rules.FEM_KINDS`); a finite-element policy's
``support`` is read by :func:`parse_owner_support`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from pydantic import field_validator, model_validator

from ..dp.families import FAMILIES, NoiseFamily, family_named
from ..exceptions import InvalidParameterError
from .checks import SCALE_RANGE
from .config_rules import Budgeted, KeyRuleError, optional_keys, positive_in, rational
from .mechanism_rules import MECHANISMS, RULES

__all__ = ["FEM_TOLERANCE_RANGE", "PolicySection", "PolicySpec", "parse_owner_support", "policy_family"]

FEM_TOLERANCE_RANGE = (1e-8, 1e-2)


@dataclass(frozen=True, slots=True)
class PolicySpec:
    kind: str
    mechanism: str
    epsilon: Fraction | None = None
    delta: Fraction | None = None
    half_width: float | None = None
    quality: float | None = None
    factory: str | None = None
    partition_delta: Fraction | None = None  # δ of partition selection: `group by` a column without categories
    support: str | None = None  # fisher-fem: the support as ``KIND:POINTS`` (privnoise._cli.supports)
    tolerance: float | None = None  # fisher-fem: relative tolerance of the finite-element eigenvalue
    family: NoiseFamily | None = None  # the registered noise family a policy names (not one of MECHANISMS)

    @property
    def is_fisher(self) -> bool:
        return self.family is None and RULES[self.mechanism].fisher

    @property
    def is_scalar_fisher(self) -> bool:
        """A Fisher policy whose noise is designed per scalar output (cos² or Gaussian)."""
        return self.family is None and RULES[self.mechanism].per_output


def policy_family(mechanism: str) -> NoiseFamily | None:
    """The registered noise family a policy's ``mechanism`` names, None for one of the server's own
    :data:`MECHANISMS` (which take precedence); :class:`ValueError` listing every accepted name otherwise."""
    if mechanism in MECHANISMS:
        return None
    try:
        return family_named(mechanism, owner="mechanism")
    except InvalidParameterError:
        accepted = ", ".join(map(repr, sorted({*MECHANISMS, *FAMILIES})))
        raise ValueError(f"must name a mechanism or a registered noise family, one of {accepted}; "
                         f"got {mechanism!r}") from None


def parse_owner_support(text: str) -> Any:
    """The :class:`~privnoise.fisher.Support` of a fisher-fem policy's ``support`` (``KIND:POINTS``, as
    ``privnoise design --support``); :class:`~privnoise.exceptions.InvalidParameterError` names the rule."""
    from ..fisher.support_text import parse_support

    return parse_support(text, "support")


def _partition_delta(v: Any) -> Fraction:
    value: Fraction = rational("delta")(v)
    if value <= 0:
        raise ValueError(f"must be > 0 (a key held by one record is released with probability ≤ it); got {v!r}")
    return value


def _support(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f"must be a support written KIND:POINTS, e.g. 'box:-1,-1;1,1'; got {v!r}")
    try:
        parse_owner_support(v)
    except InvalidParameterError as exc:
        raise ValueError(f"must be a 2-D or 3-D support KIND:POINTS ({exc}); got {v!r}") from None
    return v


def _factory(v: Any) -> str:
    if not isinstance(v, str) or ":" not in v:
        raise ValueError(f"must be 'module:function'; got {v!r}")
    return v


class PolicySection(Budgeted):
    mechanism: Any
    half_width: Any = None
    quality: Any = None
    factory: Any = None
    partition_delta: Any = None
    support: Any = None
    tolerance: Any = None

    @field_validator("mechanism")
    @classmethod
    def _mechanism(cls, v: Any) -> Any:
        if not isinstance(v, str):
            raise ValueError(f"must be the name of a mechanism or of a registered noise family; got {v!r}")
        policy_family(v)  # refuses an unknown name, listing the accepted ones
        return v

    _optional_keys = optional_keys({
        "half_width": positive_in(*SCALE_RANGE),
        "quality": positive_in(*SCALE_RANGE),
        "factory": _factory,
        "partition_delta": _partition_delta,
        "support": _support,
        "tolerance": positive_in(*FEM_TOLERANCE_RANGE),
    })

    @model_validator(mode="after")
    def _needs(self) -> PolicySection:
        family = policy_family(self.mechanism)
        rules = RULES.get(self.mechanism)
        if family is not None:  # a registered family: pure ε, or (ε, δ) converted from its ρ profile
            pure = family.currency == "epsilon"
            need: tuple[str, ...] = ("epsilon",) if pure else ("epsilon", "delta")
        else:
            assert rules is not None  # policy_family accepted the name
            pure, need = rules.pure, rules.required
        for name in need:
            if getattr(self, name) is None:
                raise KeyRuleError(name, f"is required for mechanism {self.mechanism!r}")
        if rules is None or not rules.support_keys:
            for name in ("support", "tolerance"):
                if getattr(self, name) is not None:
                    holders = " or ".join(repr(n) for n, r in RULES.items() if r.support_keys)
                    raise KeyRuleError(name, f"is for mechanism {holders} only, not {self.mechanism!r}")
        if pure and self.delta is not None:
            what = f"the {self.mechanism} mechanism" if family is None else f"the noise family {self.mechanism!r}"
            raise KeyRuleError("delta", f"{what} is pure ε-DP; remove `delta`")
        if self.partition_delta is not None and (rules is None or not rules.partition_selection):
            holders = ", ".join(n for n, r in RULES.items() if r.partition_selection)
            raise KeyRuleError("partition_delta", f"partition selection is offered with {holders} policies")
        return self
