"""A tiny decoder-only transformer that learns: the ablation lab's block (explainer.layers), trained with Adam.

Token embedding, `depth` blocks with the lab's switches, the final norm of a pre-norm model, an unembedding, and
next-token cross-entropy on the answer positions of a task from explainer.tasks. Every gradient is written by hand
beside its forward and checked against central differences in the tests. Training runs in chunks (`Training`), so a
caller can draw between them; the same seed gives the same run, number for number.
"""

import math
from collections.abc import Generator, Iterator
from dataclasses import dataclass

import numpy as np

from explainer import layers
from explainer.layers import cross_entropy
from explainer._checks import as_choice, as_int, as_scalar
from explainer.tasks import ALPHABET, TASKS, TaskData, decode, make_task

PARAMETERS = ("embeddings", *layers.BLOCK_WEIGHTS, "unembedding")


@dataclass(frozen=True)
class TrainingConfig:
    """One training run: the lab's switches, the model's size, the task and the optimiser's fixed schedule."""

    depth: int = 2  # blocks; the experiment compares 2 and 8
    width: int = 32  # d: small enough to train in seconds, wide enough for the task
    heads: int = 4  # each head reads d / heads = 8 features (RoPE turns them in pairs)
    positional: str = "rope"  # none / sinusoidal / rope, as in the ablation lab
    residual: bool = True  # h + F(h) when on, F(h) alone when off
    norm: str = "rmsnorm"  # none / rmsnorm / layernorm (gain 1, as in the lab)
    placement: str = "pre"  # pre: h + F(N(h)) and a final norm; post: N(h + F(h))
    causal_mask: bool = True  # a position may only read itself and earlier positions
    task: str = "reverse"  # where order matters: reverse or copy a string of letters
    length: int = 5  # letters per prompt; sequences are 2·length + 1 tokens
    train_size: int = 4096  # distinct training strings, of the 10⁵ possible: the model cannot memorise them all
    validation_size: int = 256  # held-out strings, never seen in training
    steps: int = 600  # Adam steps
    batch: int = 32  # sequences per step
    learning_rate: float = 3e-3  # peak; warmed up linearly, then cosine-decayed to a tenth
    warmup: int = 30  # steps of linear warm-up
    clip: float = 1.0  # the gradient's global norm is clipped to this, as is usual for transformers
    eval_every: int = 40  # steps per chunk: a progress point (and a validation pass) after each
    seed: int = 0  # weights, data split and batches

    def __post_init__(self):
        caller = "TrainingConfig"
        layers.check_architecture(self, caller=caller)
        as_choice("task", self.task, TASKS, caller=caller)
        for name in ("length", "train_size", "validation_size", "steps", "batch", "warmup", "eval_every"):
            as_int(name, getattr(self, name), caller=caller, minimum=1)
        as_scalar("learning_rate", self.learning_rate, caller=caller, minimum=0, strict=True)
        as_scalar("clip", self.clip, caller=caller, minimum=0, strict=True)


# ---- parameters ---------------------------------------------------------------------------------------------------


def init_parameters(config: TrainingConfig) -> dict[str, np.ndarray]:
    """Seeded weights with the lab's initialisation (explainer.layers.init_weights)."""
    return layers.init_weights(np.random.default_rng(config.seed), len(ALPHABET), config.width, config.depth)


# ---- the model: forward and backward ------------------------------------------------------------------------------


def forward(parameters: dict, tokens: np.ndarray, config: TrainingConfig):
    """Next-token logits (B, T, V) for token ids (B, T), and the cache `backward` needs."""
    h = layers.embed(parameters["embeddings"], tokens, config)  # (B, T, d)
    block_caches = []
    for layer in range(config.depth):
        h, cache = layers.block(h, *(parameters[name][layer] for name in layers.BLOCK_WEIGHTS), config)
        block_caches.append(cache)
    final = layers.final_norm(h, config)  # (B, T, d)
    return final @ parameters["unembedding"], (tokens, block_caches, h, final)  # (B, T, V)


def backward(grad_logits: np.ndarray, parameters: dict, cache, config: TrainingConfig) -> dict[str, np.ndarray]:
    """The gradient of the loss with respect to every parameter, given its gradient with respect to the logits."""
    tokens, block_caches, h, final = cache
    grads = {name: np.zeros_like(value) for name, value in parameters.items()}
    width, vocabulary = config.width, grad_logits.shape[-1]
    grads["unembedding"] = layers.summed_outer(final.reshape(-1, width), grad_logits.reshape(-1, vocabulary))  # (d, V)
    grad = grad_logits @ parameters["unembedding"].T  # (B, T, d)
    grad = layers.final_norm_backward(h, config, grad)
    for layer in reversed(range(config.depth)):
        grad, *block_grads = layers.block_backward(grad, block_caches[layer], config)
        for name, value in zip(layers.BLOCK_WEIGHTS, block_grads):
            grads[name][layer] = value
    np.add.at(grads["embeddings"], tokens, grad)  # a token's row collects the gradient of every place it occurs
    return grads


def split(sequences: np.ndarray, prompt_length: int):
    """(inputs, targets, scored) for next-token prediction, scoring only the positions that predict the answer."""
    inputs, targets = sequences[:, :-1], sequences[:, 1:]  # (B, T) each
    scored = np.zeros(targets.shape)
    scored[:, prompt_length - 1:] = 1.0  # target j is token j + 1: the answer starts at token prompt_length
    return inputs, targets, scored


def loss_and_gradients(parameters: dict, sequences: np.ndarray, prompt_length: int, config: TrainingConfig):
    """The answer positions' mean cross-entropy on `sequences` (B, S) and its gradient for every parameter."""
    inputs, targets, scored = split(sequences, prompt_length)
    logits, cache = forward(parameters, inputs, config)
    loss, grad_logits = cross_entropy(logits, targets, scored)
    return loss, backward(grad_logits, parameters, cache, config)


def loss_of(parameters: dict, sequences: np.ndarray, prompt_length: int, config: TrainingConfig) -> float:
    """The answer positions' mean cross-entropy, without gradients."""
    inputs, targets, scored = split(sequences, prompt_length)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return cross_entropy(forward(parameters, inputs, config)[0], targets, scored)[0]


# ---- the optimiser ------------------------------------------------------------------------------------------------


def learning_rate(step: int, config: TrainingConfig) -> float:
    """The fixed schedule: linear warm-up to the peak, then a cosine down to a tenth of it at the last step."""
    warm = min(1.0, (step + 1) / config.warmup)
    progress = step / max(1, config.steps - 1)
    return config.learning_rate * warm * (0.1 + 0.45 * (1 + math.cos(math.pi * progress)))


def adam_step(parameters: dict, grads: dict, moments: dict, step: int, config: TrainingConfig) -> None:
    """One Adam update in place (β₁ 0.9, β₂ 0.99), after clipping the gradient's global norm to config.clip."""
    norm = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    scale = min(1.0, config.clip / norm) if norm > 0 else 1.0
    rate = learning_rate(step, config)
    for name, grad in grads.items():
        first, second = moments[name]
        first += 0.1 * (scale * grad - first)
        second += 0.01 * ((scale * grad) ** 2 - second)
        corrected = first / (1 - 0.9 ** (step + 1)), second / (1 - 0.99 ** (step + 1))
        parameters[name] -= rate * corrected[0] / (np.sqrt(corrected[1]) + 1e-8)


# ---- training in chunks -------------------------------------------------------------------------------------------


class Training:
    """One training run, advanced a chunk at a time; iterating yields {step, train_loss, val_loss} after each chunk."""

    def __init__(self, config: TrainingConfig, data: TaskData | None = None):
        self.config = config
        self.data = data or make_task(config.task, config.length, config.train_size, config.validation_size, config.seed)
        self.parameters = init_parameters(config)
        self.moments = {name: (np.zeros_like(v), np.zeros_like(v)) for name, v in self.parameters.items()}
        self.rng = np.random.default_rng([config.seed, 1])  # the batches: apart from the weights' stream
        self.step = 0
        self.diverged = False  # the loss stopped being finite; training stopped there

    @property
    def done(self) -> bool:
        """All steps taken, or the run diverged."""
        return self.step >= self.config.steps or self.diverged

    def train_step(self) -> float:
        """One Adam step on a random batch of training sequences; returns the batch's loss."""
        batch = self.data.train[self.rng.integers(0, len(self.data.train), self.config.batch)]  # (B, S)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            loss, grads = loss_and_gradients(self.parameters, batch, self.data.prompt_length, self.config)
        if not (math.isfinite(loss) and all(np.isfinite(g).all() for g in grads.values())):
            self.diverged = True
            return math.nan
        adam_step(self.parameters, grads, self.moments, self.step, self.config)
        self.step += 1
        return loss

    def chunk(self, steps: int | None = None) -> dict:
        """Up to `steps` (default eval_every) steps; their mean batch loss and the validation loss after them."""
        losses = [self.train_step() for _ in range(min(steps or self.config.eval_every, self.config.steps - self.step))
                  if not self.diverged]
        train_loss = float(np.mean(losses)) if losses and not self.diverged else math.nan
        return {"step": self.step, "train_loss": train_loss, "val_loss": self.validation_loss()}

    def validation_loss(self) -> float:
        """The answer positions' mean cross-entropy on the whole validation split."""
        return loss_of(self.parameters, self.data.validation, self.data.prompt_length, self.config)

    def __iter__(self) -> Iterator[dict]:
        while not self.done:
            yield self.chunk()


# ---- generation ---------------------------------------------------------------------------------------------------


def generating(parameters: dict, prompts: np.ndarray, count: int, config: TrainingConfig) -> Generator:
    """`generate` a token at a time: yields after each one (a caller may do other work in between) and returns
    what `generate` returns."""
    sequences = np.asarray(prompts)
    for _ in range(count):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            logits = forward(parameters, sequences, config)[0][:, -1]  # (N, V): only the last position is new
        sequences = np.concatenate([sequences, logits.argmax(axis=-1)[:, None]], axis=1)
        yield
    return sequences[:, -count:]


def generate(parameters: dict, prompts: np.ndarray, count: int, config: TrainingConfig) -> np.ndarray:
    """Greedy decoding: append the most likely next token `count` times to prompts (N, P); returns (N, count)."""
    return _finish(generating(parameters, prompts, count, config))


def evaluation(run: Training, samples: int = 3) -> Generator:
    """`evaluate` a forward pass at a time: yields after each one and returns what `evaluate` returns."""
    data, config = run.data, run.config
    prompt_length, answers = data.prompt_length, data.validation[:, data.prompt_length:]  # (N, n)
    inputs, targets, scored = split(data.validation, prompt_length)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        forced = forward(run.parameters, inputs, config)[0].argmax(axis=-1)[:, prompt_length - 1:]  # (N, n)
    yield
    generated = yield from generating(run.parameters, data.validation[:, :prompt_length], answers.shape[1], config)
    train_loss = loss_of(run.parameters, data.train[:len(data.validation)], prompt_length, config)
    yield
    val_loss = run.validation_loss()
    yield
    return {
        "train_loss": train_loss,
        "val_loss": val_loss,
        "teacher_forced_accuracy": float((forced == answers).all(axis=1).mean()),
        "generated_accuracy": float((generated == answers).all(axis=1).mean()),
        "samples": [{"prompt": decode(data.validation[i, :prompt_length]), "expected": decode(answers[i]),
                     "generated": decode(generated[i])} for i in range(samples)],
    }


def evaluate(run: Training, samples: int = 3) -> dict:
    """Final losses, teacher-forced and generated answer accuracy on the validation split, and a few samples."""
    return _finish(evaluation(run, samples))


def _finish(steps: Generator):
    """Run a generator to its end and return its return value."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


# ---- the experiment -----------------------------------------------------------------------------------------------

ABLATIONS = {  # what each run of the experiment turns off; "full" turns off nothing
    "full": {},
    "no positions": {"positional": "none"},
    "no residual": {"residual": False},
    "no norm": {"norm": "none"},
    "no causal mask": {"causal_mask": False},
}
GRID_DEPTHS = (2, 8)  # shallow, where every variant can learn, and deep enough for depth to matter


def ablation_grid(**overrides) -> dict[tuple[str, int], TrainingConfig]:
    """The experiment's runs by (ablation, depth): every ablation at every depth, same seed and schedule."""
    return {(name, depth): TrainingConfig(depth=depth, **switches, **overrides)
            for depth in GRID_DEPTHS for name, switches in ABLATIONS.items()}


def run_experiment(config: TrainingConfig, progress=None) -> dict:
    """Train one run to the end and evaluate it: the validation loss before training, the curve of
    {step, train_loss, val_loss} and `evaluate`'s numbers."""
    run = Training(config)
    initial_val_loss, curve = run.validation_loss(), []
    for point in run:
        curve.append(point)
        if progress:
            progress(point)
    return {"initial_val_loss": initial_val_loss, "curve": curve, "steps": run.step, "diverged": run.diverged,
            **evaluate(run)}
