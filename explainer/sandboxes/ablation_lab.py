"""The first lesson's lab: switch the pillars of a transformer off and watch, layer by layer, the residual stream, the
gradient on its way back down, or how alike the positions' vectors have become; on seeded random weights, or on the
model trained when the site is built (explainer.trained)."""

import numpy as np

from explainer import figure as fig
from explainer import idle
from explainer.ablation import (MAX_DEPTH, AblationConfig, AblationResult, gradient_norms, preparing, run_ablation,
                                tokenize, trained_config, trained_shape)
from explainer.sandbox import Choice, IntParam, Toggle, sandbox
from explainer.tasks import ALPHABET

SENTENCE = "the hungry cat chases the small grey dog"
SWAPPED = "the small grey dog chases the hungry cat"  # the same words, the roles of cat and dog exchanged
# The trained model reads its own task: a reversal, letters a to j. Neither string is among its training strings.
REVERSAL = "badge|egdab"
REVERSAL_SWAPPED = "egdab|badge"  # the same letters, prompt and answer exchanged: another correct reversal
WEIGHTS = (("random", "random (seeded)"), ("trained", "trained to reverse strings"))
VIEWS = (("stream", "stream size and signal"), ("gradients", "gradient size"),
         ("similarity", "similarity of positions"))
RMS_LIMITS = (1e-4, 1e4)  # fixed, so turning a switch moves the bars instead of the axis
GRADIENT_LIMITS = (1e-6, 1e8)  # fixed too: every arrangement's gradients fall inside, bar the exact zeros
SIMILARITY_PANELS = 7  # squares at most: more would shrink a square below a few pixels per position
SENTENCE_IDS, SWAPPED_IDS = tokenize(SENTENCE), tokenize(SWAPPED)
REVERSAL_IDS, REVERSAL_SWAPPED_IDS = ([ALPHABET.index(c) for c in text] for text in (REVERSAL, REVERSAL_SWAPPED))
INPUTS = {"random": (SENTENCE_IDS, SWAPPED_IDS), "trained": (REVERSAL_IDS, REVERSAL_SWAPPED_IDS)}
TONES = {"HEALTHY": "good", "VANISHING": "warn", "EXPLODING": "bad", "NAN": "bad"}


@sandbox(
    Toggle("positional", "Positional encoding (RoPE)", True),
    Toggle("residual", "Residual add", True),
    Toggle("rmsnorm", "RMSNorm (pre-norm)", True),
    Toggle("causal_mask", "Causal mask", True),
    IntParam("depth", "Depth", 1, MAX_DEPTH, default=12, unit="layers"),
    Choice("weights", "Weights", WEIGHTS, "random"),
    Choice("view", "Show", VIEWS, "stream"),
    title="Ablation lab",
)
def ablation_lab(positional: bool, residual: bool, rmsnorm: bool, causal_mask: bool, depth: int,
                 weights: str, view: str) -> dict:
    """Per-layer signal of a toy transformer with any of its four pillars switched off."""
    switches = {"positional": positional, "residual": residual, "rmsnorm": rmsnorm, "causal_mask": causal_mask}
    config = lab_config(depth, weights, **switches)
    result = run_ablation(config, *INPUTS[weights])
    final = config.depth if result.first_nonfinite_layer is None else result.first_nonfinite_layer - 1
    distinct = result.token_signal[final] / result.residual_rms[final] if result.residual_rms[final] else 0.0
    axes, marks, readouts = PANELS[view](result, final)
    description = fig.figure(
        axes=axes, marks=marks,
        readouts=[
            fig.readout("word-order sensitivity", result.word_order_sensitivity),
            fig.readout("stream RMS, last layer", result.residual_rms[final]),
            fig.readout("tokens still distinct", 100 * distinct, unit="%", digits=1),
            *readouts,
        ],
        status=fig.status(result.status, TONES[result.status], _reason(result.reason, config, depth)),
    )
    idle.later("ablation_lab", _preparing(config.depth, weights, switches))
    return description


# ---- the three views: each returns the axes, the marks and its own readouts ---------------------------------------


def _stream_panel(result: AblationResult, final: int) -> tuple[dict, list, list]:
    """The stream's RMS (bars) and its token-distinct part (line), layer by layer."""
    depth = result.config.depth
    layers = np.arange(depth + 1)
    # On a log axis a bar starts at the bottom edge; values past the top are drawn clipped at the edge.
    stream = np.clip(result.residual_rms, *RMS_LIMITS)
    signal = np.clip(result.token_signal, *RMS_LIMITS)
    axes = fig.axes(xlim=(-0.7, depth + 0.7), ylim=RMS_LIMITS, yscale="log", xlabel="layer (0 = embeddings)",
                    ylabel="RMS", xticks=layer_ticks(depth))
    marks = [
        fig.bars(layers, stream, color="primary", label="residual stream RMS"),
        fig.line(layers, signal, color="accent", width=2.5, label="token-distinct signal"),
        *[fig.point(x, y, color="accent", size=3.5) for x, y in zip(layers, signal) if np.isfinite(y)],
    ]
    return axes, marks, []


def _gradient_panel(result: AblationResult, final: int) -> tuple[dict, list, list]:
    """The size of the loss's gradient at every layer: what the backward pass carries down to the embeddings."""
    config = result.config
    norms = np.array(gradient_norms(config, *INPUTS[config.weights]).gradient_norm)  # (L + 1,)
    layers = np.arange(config.depth + 1)
    axes = fig.axes(xlim=(-0.7, config.depth + 0.7), ylim=GRADIENT_LIMITS, yscale="log",
                    xlabel="layer (0 = embeddings)", ylabel="gradient size", xticks=layer_ticks(config.depth))
    marks = [fig.bars(layers, np.clip(norms, *GRADIENT_LIMITS), color="primary",
                      label="‖∂loss/∂h‖, the gradient reaching each layer")]
    with np.errstate(divide="ignore", invalid="ignore"):
        kept = norms[0] / norms[-1]
    return axes, marks, [fig.readout("gradient at the embeddings ÷ at the top", kept if np.isfinite(kept) else None)]


def _similarity_panel(result: AblationResult, final: int) -> tuple[dict, list, list]:
    """Every two positions' cosine similarity, one square per layer shown: rank collapse turns a square solid.

    The squares are one heat map whose columns between two squares are empty: one mark to describe, not one per
    square (in Pyodide each mark's few numpy calls cost more than its cells)."""
    shown = similarity_layers(result.config.depth)
    cosines = np.array(result.cosine_similarity)  # (L + 1, T, T)
    length = cosines.shape[-1]
    stride = length + 1  # a square and the empty column after it
    squares = np.full((length, len(shown) * stride - 1), np.nan)  # (T, squares' columns); position 1 on top
    for panel, layer in enumerate(shown):
        squares[:, panel * stride:panel * stride + length] = cosines[layer][::-1]
    marks = [fig.heatmap(np.arange(squares.shape[1] + 1), np.arange(length + 1), squares, vmin=0, vmax=1,
                         label="cosine similarity (full = 1, empty ≤ 0)")]
    ticks = [(panel * stride + length / 2, f"layer {layer}") for panel, layer in enumerate(shown)]
    axes = fig.axes(xlim=(-0.5, len(shown) * stride - 0.5), ylim=(-0.3, 1.25 * length), xticks=ticks,
                    yticks=[], grid=False, xlabel="every two positions, at the layers shown", ylabel="position")
    return axes, marks, [fig.readout("mean cosine between positions, last layer", mean_cosine(cosines[final]))]


def similarity_layers(depth: int) -> list[int]:
    """The layers the similarity view draws: all of them up to SIMILARITY_PANELS, else evenly spaced, both ends in."""
    return sorted({round(layer) for layer in np.linspace(0, depth, min(depth + 1, SIMILARITY_PANELS))})


def mean_cosine(cosines: np.ndarray) -> float:
    """The mean cosine similarity of two different positions (the diagonal left out) of a (T, T) matrix."""
    length = len(cosines)
    return float((cosines.sum() - np.trace(cosines)) / (length * (length - 1)))


PANELS = {"stream": _stream_panel, "gradients": _gradient_panel, "similarity": _similarity_panel}


def lab_config(depth: int, weights: str, positional: bool, residual: bool, rmsnorm: bool,
               causal_mask: bool) -> AblationConfig:
    """The model the lab runs for its controls (the trained one never deeper than its own blocks)."""
    switches = {"positional": "rope" if positional else "none", "residual": residual,
                "norm": "rmsnorm" if rmsnorm else "none", "causal_mask": causal_mask}
    if weights == "trained":
        return trained_config(depth=min(depth, trained_shape()["depth"]), **switches)
    return AblationConfig(depth=depth, **switches)


def _reason(reason: str, config: AblationConfig, asked: int) -> str:
    """The status's reason, saying so when the trained model has fewer blocks than the depth asked for."""
    if config.depth < asked:
        return f"{reason} (the trained model has {config.depth} blocks: all of them are shown)"
    return reason


def _preparing(depth: int, weights: str, switches: dict):
    """The lab's work for idle time: a step that computes one block of what the reader's next change may need.

    A switch flipped at depth 24 asks for 24 blocks never computed: more than a frame in Pyodide (about 0.6 ms a
    block there, nearly all of it matrix products). So between changes the lab computes, one block per step and the
    arrangements in turn, the blocks of the arrangements one switch away and the deeper blocks of this one (for the
    depth slider's End key), each forward and then back down (for the gradient view).
    """
    waiting = [lab_config(depth, weights, **{**switches, name: not on}) for name, on in switches.items()]
    waiting.append(lab_config(MAX_DEPTH, weights, **switches))
    return preparing(waiting, *INPUTS[weights])


def layer_ticks(depth: int) -> list[tuple[int, str]]:
    """Ticks under layers 0 to `depth`: every layer up to 12, every other one beyond."""
    stride = 1 if depth <= 12 else 2
    return [(layer, str(layer)) for layer in range(0, depth + 1, stride)]
