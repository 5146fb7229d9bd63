"""What `import explainer` costs on top of the numpy import that every reader's browser pays anyway."""

import subprocess
import sys

from benchmarks import Ratio, median_seconds

REPEATS = 9


def python_importing(modules: str):
    return lambda: subprocess.run([sys.executable, "-c", f"import {modules}"], check=True)


def run() -> list[Ratio]:
    numpy_alone = median_seconds(python_importing("numpy"), REPEATS)
    with_explainer = median_seconds(python_importing("numpy, explainer"), REPEATS)
    return [Ratio("fresh interpreter: import numpy + explainer", with_explainer, numpy_alone, "import numpy", 1.10)]
