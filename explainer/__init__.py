"""The math of the transformer explainer lessons, in numpy and the standard library only.

The same package runs in CPython (tests, build-time figures) and, as a wheel, in Pyodide in the reader's browser, so
it must never import matplotlib, mkdocs or anything browser-specific.
"""

__version__ = "0.1.0"

from explainer.attention import attention, attention_scores, softmax, softmax_jacobian
from explainer.norms import layernorm, layernorm_jacobian, rmsnorm, rmsnorm_jacobian
from explainer.projection import (
    perpendicular_length_change,
    perpendicular_length_change_approx,
    projection,
    projection_matrix,
    rejection_matrix,
)
from explainer.recurrence import constant_recurrence, proportional_recurrence
from explainer.residual import (
    Branch,
    nonorm_block,
    nonorm_block_jacobian,
    postnorm_block,
    postnorm_block_jacobian,
    prenorm_block,
    prenorm_block_jacobian,
)
from explainer.taylor import TAYLOR_EXAMPLES, TangentZoom, TaylorExample, taylor_approx, tangent_zoom

__all__ = [
    # math kernels
    "Branch",
    "TAYLOR_EXAMPLES",
    "TangentZoom",
    "TaylorExample",
    "attention",
    "attention_scores",
    "constant_recurrence",
    "layernorm",
    "layernorm_jacobian",
    "nonorm_block",
    "nonorm_block_jacobian",
    "perpendicular_length_change",
    "perpendicular_length_change_approx",
    "postnorm_block",
    "postnorm_block_jacobian",
    "prenorm_block",
    "prenorm_block_jacobian",
    "projection",
    "projection_matrix",
    "proportional_recurrence",
    "rejection_matrix",
    "rmsnorm",
    "rmsnorm_jacobian",
    "softmax",
    "softmax_jacobian",
    "taylor_approx",
    "tangent_zoom",
]
