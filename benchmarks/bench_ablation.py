"""The ablation lab's model in CPython: the forward pass from the embeddings up, and the gradient view's backward.

Target ≤ 5 ms in CPython at depth 24, d = 64, 8 tokens for either. What a reader waits for is the same work inside
Pyodide, measured by bench_pyodide.py against the frame budget; these rows catch a regression in CPython, where the
tests and the site build run it.
"""

from benchmarks import Ratio, median_seconds
from explainer import ablation
from explainer.ablation import AblationConfig, clear_cache, gradient_norms, run_ablation, tokenize

BUDGET_SECONDS = 0.005
REPEATS = 200


def _forget_gradients() -> None:
    for stack in ablation._LAYERS_CACHE.values():  # the backward is cached per depth: time it anew
        stack.gradient_norms.clear()


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
    config = AblationConfig(depth=24, width=64)
    run_ablation(config, tokens)
    seconds = median_seconds(lambda: (_forget_gradients(), gradient_norms(config, tokens)), REPEATS)
    rows.append(Ratio("gradient_norms depth 24 (forward cached)", seconds, BUDGET_SECONDS, "5 ms budget (a constant)",
                      1.0))
    return rows
