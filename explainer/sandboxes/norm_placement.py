"""Where the norm sits: the ablation lab's model built PreNorm, h + F(N(h)), or PostNorm, N(h + F(h)), with RMSNorm or
LayerNorm, showing the stream's size and the size of the gradient that travels back down it, layer by layer."""

import dataclasses

import numpy as np

from explainer import figure as fig
from explainer import idle
from explainer.ablation import MAX_DEPTH, AblationConfig, gradient_norms, preparing, run_ablation
from explainer.sandbox import Choice, IntParam, sandbox
from explainer.sandboxes.ablation_lab import SENTENCE_IDS, SWAPPED_IDS, TONES, layer_ticks

PLACEMENT_OPTIONS = (("pre", "PreNorm: h + F(N(h))"), ("post", "PostNorm: N(h + F(h))"))
NORM_OPTIONS = (("rmsnorm", "RMSNorm"), ("layernorm", "LayerNorm"))
CHOICES = {"placement": PLACEMENT_OPTIONS, "norm": NORM_OPTIONS}  # what _preparing flips
LIMITS = (1e-2, 1e2)  # fixed, so switching the placement moves the marks, not the axis; every arrangement fits


@sandbox(
    Choice("placement", "Norm placement", PLACEMENT_OPTIONS, "pre"),
    Choice("norm", "Norm", NORM_OPTIONS, "rmsnorm"),
    IntParam("depth", "Depth", 1, MAX_DEPTH, default=12, unit="layers"),
    title="PreNorm or PostNorm",
)
def norm_placement(placement: str, norm: str, depth: int) -> dict:
    """The stream's RMS and the gradient's size at every layer, with the norm before the branch or after the add."""
    config = AblationConfig(depth=depth, norm=norm, placement=placement)
    result = run_ablation(config, SENTENCE_IDS, SWAPPED_IDS)
    gradient = np.array(gradient_norms(config, SENTENCE_IDS, SWAPPED_IDS).gradient_norm)  # (L + 1,)
    layers = np.arange(depth + 1)
    idle.later("norm_placement", _preparing(config))
    return fig.figure(
        axes=fig.axes(xlim=(-0.7, depth + 0.7), ylim=LIMITS, yscale="log", xlabel="layer (0 = embeddings)",
                      ylabel="size", xticks=layer_ticks(depth)),
        marks=[
            fig.bars(layers, np.clip(result.residual_rms, *LIMITS), color="primary", label="residual stream RMS"),
            fig.line(layers, np.clip(gradient, *LIMITS), color="accent", width=2.5,
                     label="‖∂loss/∂h‖, the gradient reaching each layer"),
            *[fig.point(x, y, color="accent", size=3.5) for x, y in zip(layers, np.clip(gradient, *LIMITS))],
        ],
        readouts=[
            fig.readout("stream RMS, last layer", result.residual_rms[-1]),
            fig.readout("gradient at the embeddings ÷ at the top", gradient[0] / gradient[-1]),
            fig.readout("tokens still distinct", 100 * result.token_signal[-1] / result.residual_rms[-1], unit="%",
                        digits=1),
        ],
        status=fig.status(result.status, TONES[result.status], result.reason),
    )


def _preparing(config: AblationConfig):
    """Idle work (explainer.idle): the forward and backward passes of the two arrangements one choice away and of this
    one at full depth and one layer either side (the slider's End and arrow keys), a block per step, so that the
    reader's next change finds them computed (a new arrangement at depth 24 is 24 blocks each way: more than a frame
    in Pyodide; a new depth of a known one, its backward pass)."""
    waiting = [dataclasses.replace(config, **{name: value}) for name, options in CHOICES.items()
               for value, _ in options if value != getattr(config, name)]
    depths = sorted({MAX_DEPTH, max(1, config.depth - 1), min(MAX_DEPTH, config.depth + 1)} - {config.depth})
    waiting.extend(dataclasses.replace(config, depth=depth) for depth in depths)
    return preparing(waiting, SENTENCE_IDS, SWAPPED_IDS)
