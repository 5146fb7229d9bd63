"""Numbers the lesson "Break the model" quotes."""

from build_scripts.quantities import number, quantity
from explainer.ablation import AblationConfig, run_ablation, tokenize

SENTENCE, SWAPPED = tokenize("the hungry cat chases the small grey dog"), tokenize("the small grey dog chases the hungry cat")


@quantity("ablation.sensitivity_full_24")
def _():
    return number(run_ablation(AblationConfig(depth=24), SENTENCE, SWAPPED).word_order_sensitivity, 3)
