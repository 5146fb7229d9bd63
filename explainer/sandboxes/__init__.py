"""The sandboxes of the lessons, one module per sandbox, named after it (explainer.sandbox finds one by its name).

`declare_all()` imports every module here, so a new module is found without being listed: its decorated functions
register themselves. Importing this package alone declares nothing, so the browser loads only the sandbox it draws.
"""

import importlib
import pkgutil


def declare_all() -> None:
    """Import every sandbox module, declaring all sandboxes."""
    for module in pkgutil.iter_modules(__path__, prefix=f"{__name__}."):
        importlib.import_module(module.name)
