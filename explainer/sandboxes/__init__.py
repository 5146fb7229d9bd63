"""The sandboxes of the lessons, one module per topic; importing this package declares every one of them.

A new module here is found without being listed: each module's decorated functions register themselves.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__, prefix=f"{__name__}."):
    importlib.import_module(_module.name)
