"""The math of the transformer explainer lessons, in numpy and the standard library only.

The same package runs in CPython (tests, build-time figures) and, as a wheel, in Pyodide in the reader's browser, so
it must never import matplotlib, mkdocs or anything browser-specific.
"""

__version__ = "0.1.0"

import importlib

# Public names and the module each lives in. They load on first use (PEP 562), so `import explainer` costs next to
# nothing on top of numpy, and a page that needs one kernel does not pay for all of them.
_EXPORTS = {
    "explainer.attention": ("attention", "attention_scores", "softmax", "softmax_jacobian"),
    "explainer.norms": ("layernorm", "layernorm_jacobian", "rmsnorm", "rmsnorm_jacobian"),
    "explainer.projection": ("perpendicular_length_change", "perpendicular_length_change_approx", "projection",
                             "projection_matrix", "rejection_matrix"),
    "explainer.recurrence": ("constant_recurrence", "proportional_recurrence"),
    "explainer.residual": ("Branch", "nonorm_block", "nonorm_block_jacobian", "postnorm_block",
                           "postnorm_block_jacobian", "prenorm_block", "prenorm_block_jacobian"),
    "explainer.taylor": ("TAYLOR_EXAMPLES", "TangentZoom", "TaylorExample", "taylor_approx", "tangent_zoom"),
    "explainer.ablation": ("AblationConfig", "AblationResult", "GradientReport", "cosine_similarities", "gradient_norms",
                           "run_ablation", "tokenize"),
    "explainer.training": ("Training", "TrainingConfig", "ablation_grid", "generate", "run_experiment"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_MODULE_OF)


# Two functions share their module's name. Importing a submodule binds its name on the package, so these are bound
# eagerly, after their modules load, or `explainer.projection` would be the module once anything imported it.
from explainer.attention import attention  # noqa: E402
from explainer.projection import projection  # noqa: E402


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'explainer' has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *__all__])
