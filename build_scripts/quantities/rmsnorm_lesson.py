"""Numbers the lesson "Normalize what the branch reads" quotes."""

import numpy as np

from build_scripts.quantities import number, quantity, vector
from explainer import proportional_recurrence, softmax


@quantity("recurrence.compound_16")
def _():
    return number(proportional_recurrence(1.0, 0.1, 16)[-1], 3)


@quantity("attention.softmax_1_2")
def _():
    return vector(softmax(np.array([1.0, 2.0])), 3)
