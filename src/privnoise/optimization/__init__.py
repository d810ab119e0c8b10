"""Private quadratic optimisation (Farokhi, "Privacy-preserving constrained quadratic optimization with Fisher
information").

==========================================  ==================================================================
:class:`QuadraticProgram`                   min_{x ∈ 𝒞} ½xᵀQx + qᵀx, eqs. (1) and (4); ``solve()`` gives the optimum
:class:`Box`, :class:`Ball`,                constraint sets with exact projections P_𝒞 (eq. (5))
:class:`Affine`, :class:`Polyhedron`
:func:`private_gradient_descent`            noisy (projected) gradient descent, eqs. (3) and (5)
:func:`optimal_noise`                       Theorem 1: N(0, (ε/n) I), Tr 𝓘 = n²/ε
:class:`ConstantStep`,                      step-size rules (α_k = 1/(λ(k + 1)) is Proposition 2's 1/(λk))
:class:`InverseTimeStep`
:class:`OptimizationGuarantee`              Tr 𝓘, the Cramér–Rao / Proposition 1 bounds on (Q, q) from the
                                            iterates (matrix A of (6)), and (ε, δ)-DP for a declared sensitivity
:func:`private_linear_regression`           Section III with the corrected cost expansion (errata 13)
:func:`load_diabetes`, :func:`load_adult`   real data: scikit-learn's diabetes set, UCI Adult from a local file
==========================================  ==================================================================

Proposition 2's bound is not a guarantee (errata 12): results report the measured objective gap instead.

Examples
--------
>>> import numpy as np, privnoise.optimization as po
>>> prob = po.QuadraticProgram(np.eye(2), [1.0, -1.0], constraint=po.Ball(np.zeros(2), 0.5))
>>> res = po.private_gradient_descent(prob, noise_variance=0.1, iterations=50, rng=0)
>>> res.guarantee.fisher_trace
40.0
"""

from .constraints import Affine, Ball, Box, Constraint, Polyhedron
from .datasets import RegressionData, load_adult, load_diabetes
from .descent import (
    ConstantStep,
    DescentResult,
    InverseTimeStep,
    StepRule,
    expected_final_objective,
    final_objectives,
    optimal_noise,
    private_gradient_descent,
)
from .guarantees import OptimizationGuarantee, iterates_guarantee
from .problems import QuadraticProgram, Solution
from .regression import (
    LinearRegressionModel,
    private_linear_regression,
    regression_gradient_sensitivity,
    regression_problem,
)

__all__ = [
    "Affine",
    "Ball",
    "Box",
    "ConstantStep",
    "Constraint",
    "DescentResult",
    "InverseTimeStep",
    "LinearRegressionModel",
    "OptimizationGuarantee",
    "Polyhedron",
    "QuadraticProgram",
    "RegressionData",
    "Solution",
    "StepRule",
    "expected_final_objective",
    "final_objectives",
    "iterates_guarantee",
    "load_adult",
    "load_diabetes",
    "optimal_noise",
    "private_gradient_descent",
    "private_linear_regression",
    "regression_gradient_sensitivity",
    "regression_problem",
]
