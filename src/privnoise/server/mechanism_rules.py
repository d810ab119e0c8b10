"""What each of the server's own policy mechanisms asks of the owner's configuration: the one table that names them.

A policy's ``mechanism`` is one of these names or a registered noise family (:mod:`privnoise.dp.families`). The
table says, per mechanism, which keys a policy must give, whether ``delta`` is refused (pure ε-DP), whether its
answers are charged in Fisher information, which query kinds and engines it answers, and whether it offers partition
selection. The configuration's checks (:mod:`.policies`, :mod:`.datasets`) read these rules and never compare a
mechanism's name; how each mechanism builds its noise is :data:`.mechanisms.POLICY_NOISES`.

Examples
--------
>>> RULES["gaussian"].required
('epsilon', 'delta')
>>> [name for name, rule in RULES.items() if rule.fisher]
['fisher-cosine', 'fisher-gaussian', 'fisher-fem']
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FEM_KINDS", "FISHER_KINDS", "MECHANISMS", "NOISE_ONLY_KINDS", "RULES", "MechanismRules"]

#: The kinds answered by additive Laplace or Gaussian noise only (vectors of counts and sums, one charge).
NOISE_ONLY_KINDS = ("histogram",)
#: The kinds a Fisher policy answers (linear, unfiltered).
FISHER_KINDS = ("sum", "mean", "linear", "identity")
#: The kinds finite-element noise answers: a d-dimensional support noises d consecutive records together.
FEM_KINDS = ("identity",)


@dataclass(frozen=True, slots=True)
class MechanismRules:
    """The configuration rules of one policy mechanism.

    Attributes
    ----------
    name : str
        The ``mechanism`` of the configuration.
    required : tuple of str
        The policy keys it needs.
    pure : bool
        Pure ε-DP: a policy's ``delta`` is refused.
    fisher : bool
        A Fisher-information policy: its answers are charged the information they carry, on floored columns; it
        answers :data:`FISHER_KINDS` only.
    per_output : bool
        A Fisher policy whose noise is designed per scalar output (cos² or Gaussian).
    kinds : tuple of str, optional
        The only query kinds it answers, within the above (None: no further restriction).
    answers_vectors : bool
        It answers :data:`NOISE_ONLY_KINDS` (histograms) with additive noise.
    quantiles : bool
        It answers quantiles, and nothing else.
    partition_selection : bool
        A group-by over a column without categories may select partitions (``partition_delta``).
    support_keys : bool
        It takes ``support`` and ``tolerance`` (a finite-element design).
    engines : tuple of str, optional
        The only dataset engines it answers on (None: every engine).
    """

    name: str
    required: tuple[str, ...]
    pure: bool = False
    fisher: bool = False
    per_output: bool = False
    kinds: tuple[str, ...] | None = None
    answers_vectors: bool = False
    quantiles: bool = False
    partition_selection: bool = False
    support_keys: bool = False
    engines: tuple[str, ...] | None = None


#: The server's own mechanisms by name (a registered noise family's rules come from the family itself).
RULES: dict[str, MechanismRules] = {
    r.name: r
    for r in (
        MechanismRules("laplace", ("epsilon",), pure=True, answers_vectors=True, partition_selection=True),
        MechanismRules("gaussian", ("epsilon", "delta"), answers_vectors=True),
        MechanismRules("fisher-cosine", ("half_width",), fisher=True, per_output=True),
        MechanismRules("fisher-gaussian", ("quality",), fisher=True, per_output=True),
        MechanismRules("fisher-fem", ("support",), fisher=True, kinds=FEM_KINDS, support_keys=True, engines=("sql",)),
        MechanismRules("custom", ("factory", "epsilon")),
        MechanismRules("exponential", ("epsilon",), pure=True, quantiles=True),
    )
}
#: Their names, in the order the configuration's documentation lists them.
MECHANISMS = tuple(RULES)
