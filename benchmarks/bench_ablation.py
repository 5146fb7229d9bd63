"""The ablation lab's forward pass: the work behind every slider move in the first lesson's lab.

Target ≤ 5 ms in CPython at depth 24, d = 64, 8 tokens, so that in Pyodide (2-4× slower) an update fits in a frame.
"""

from benchmarks import Ratio, median_seconds
from explainer.ablation import AblationConfig, clear_cache, run_ablation, tokenize

BUDGET_SECONDS = 0.005
REPEATS = 200


def run() -> list[Ratio]:
    tokens = tokenize("the hungry cat chases the small grey dog")
    rows = []
    for depth in (8, 24):
        config = AblationConfig(depth=depth, width=64)
        run_ablation(config, tokens)  # the weights are drawn once per seed; time the forward pass
        # Every call from the embeddings up: without the cache of computed layers a depth change would use.
        seconds = median_seconds(lambda: (clear_cache(), run_ablation(config, tokens)), REPEATS)
        rows.append(Ratio(f"run_ablation depth {depth}, d 64, 8 tokens", seconds, BUDGET_SECONDS,
                          "5 ms budget (a constant)", 1.0))
    return rows
