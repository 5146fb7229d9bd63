"""Attention is sensitive to scale: grow q and k by s and the scores grow by s², sharpening the softmax to one token."""

import numpy as np

from explainer import figure as fig
from explainer.attention import softmax
from explainer.sandbox import FloatParam, sandbox

BASE_SCORES = np.array([1.0, 2.0])  # (2,) the essay's two scores, at s = 1
TOKENS = np.arange(BASE_SCORES.size)  # (2,) bar positions
OFFSET, BAR_WIDTH = 0.18, 0.32  # the s = 1 bars sit left of each token, the current ones right
SATURATED = 0.99  # past this share for one token, attention is all but a hard choice
WEIGHT_TICKS = [(v, f"{v:g}") for v in (0, 0.25, 0.5, 0.75, 1)]  # none above 1: the legend lives up there


def _status(weights: np.ndarray) -> dict:
    if weights.max() > SATURATED:
        return fig.status("SATURATED", "warn", "One token takes over 99% of the weight: the mix has become a choice.")
    return fig.status("MIXING", "info", "Both tokens still contribute a visible share of the output.")


@sandbox(
    FloatParam("qk_scale", "Scale s of q and k", 0.5, 10, step=0.05, default=1),
    title="Attention: larger inputs, sharper weights",
)
def attention_scale(qk_scale: float) -> dict:
    """Scale q and k by s: the scores [1, 2] become s²·[1, 2] (×100 at s = 10) and softmax picks ever more one token."""
    multiplier = qk_scale**2  # each score is a dot product of q and k, so it carries s twice
    scores = multiplier * BASE_SCORES  # (2,)
    weights, reference = softmax(scores), softmax(BASE_SCORES)  # (2,), (2,)
    return fig.figure(
        axes=fig.axes(xlim=(-0.6, 1.6), ylim=(0, 1.45), xlabel="key token", ylabel="attention weight",
                      xticks=[(0, "token 1"), (1, "token 2")], yticks=WEIGHT_TICKS),
        marks=[
            fig.bars(TOKENS - OFFSET, reference, width=BAR_WIDTH, color="muted", label="scores [1, 2] (s = 1)"),
            fig.bars(TOKENS + OFFSET, weights, width=BAR_WIDTH, color="primary", label="scores s²·[1, 2]"),
            *[fig.text(token + OFFSET, 1.08, f"score {score:.2f}", anchor="middle")
              for token, score in zip(TOKENS, scores)],
        ],
        readouts=[
            fig.readout("score multiplier s²", multiplier),
            fig.readout("weight on token 1", weights[0], digits=6),
            fig.readout("weight on token 2", weights[1], digits=6),
            fig.readout("score gap", scores[1] - scores[0]),
        ],
        status=_status(weights),
    )

