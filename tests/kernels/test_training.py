"""The training lab: every backward pass against central differences, the checker catching a wrong one, and a model
that learns, deterministically."""

import dataclasses

import numpy as np
import pytest

from explainer import layers
from explainer.tasks import decode, make_task
from explainer.training import (PARAMETERS, Training, TrainingConfig, ablation_grid, generate, init_parameters,
                                loss_and_gradients, loss_of)
from kernels.gradcheck import gradcheck

BATCH, LENGTH, WIDTH, HEADS = 2, 4, 8, 2  # tiny: dh = 4, so RoPE turns two pairs per head
SWITCHES = [
    {},
    {"positional": "none"},
    {"positional": "sinusoidal"},
    {"residual": False},
    {"norm": "none"},
    {"norm": "layernorm"},
    {"placement": "post"},
    {"placement": "post", "norm": "layernorm", "residual": False},
    {"causal_mask": False},
]


def tiny(**switches) -> TrainingConfig:
    return TrainingConfig(depth=2, width=WIDTH, heads=HEADS, length=3, train_size=64, validation_size=16,
                          **switches)


def check_vjp(forward, backward, inputs, index, rng, name):
    """gradcheck of ⟨g, forward(inputs)⟩ with respect to inputs[index] against backward(g)[index]."""
    output = forward(*inputs)
    g = rng.standard_normal(output.shape)  # (output shape) a fixed random cotangent

    def scalar(x):
        return np.vdot(g, forward(*inputs[:index], x, *inputs[index + 1:]))

    gradcheck(scalar, lambda x: backward(g)[index], inputs[index], rng=rng, name=name)


@pytest.mark.parametrize("kind", ["none", "rmsnorm", "layernorm"])
def test_normalise_backward(kind, rng):
    h = rng.standard_normal((BATCH, LENGTH, WIDTH))
    check_vjp(lambda x: layers.normalise(x, kind), lambda g: [layers.normalise_backward(h, kind, g)], [h], 0, rng,
              f"normalise_backward({kind})")


def test_rotate_backward_is_the_transpose(rng):
    x = rng.standard_normal((BATCH, HEADS, LENGTH, WIDTH // HEADS))
    check_vjp(layers.rotate, lambda g: [layers.rotate_backward(g)], [x], 0, rng, "rotate_backward")


@pytest.mark.parametrize("rope", [True, False])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("index", [0, 1, 2], ids=["x", "qkv", "out"])
def test_attention_backward(rope, causal, index, rng):
    inputs = [rng.standard_normal((BATCH, LENGTH, WIDTH)), rng.standard_normal((WIDTH, 3 * WIDTH)) / 2,
              rng.standard_normal((WIDTH, WIDTH)) / 2]

    def forward(x, qkv, out):
        return layers.attention(x, qkv, out, HEADS, rope, causal)[0]

    check_vjp(forward, lambda g: layers.attention_backward(g, layers.attention(*inputs, HEADS, rope, causal)[1]),
              inputs, index, rng, "attention_backward")


@pytest.mark.parametrize("index", [0, 1, 2], ids=["x", "up", "down"])
def test_mlp_backward(index, rng):
    inputs = [rng.standard_normal((BATCH, LENGTH, WIDTH)), rng.standard_normal((WIDTH, 4 * WIDTH)),
              rng.standard_normal((4 * WIDTH, WIDTH))]
    check_vjp(lambda *a: layers.mlp(*a)[0], lambda g: layers.mlp_backward(g, layers.mlp(*inputs)[1]), inputs, index,
              rng, "mlp_backward")


@pytest.mark.parametrize("switches", SWITCHES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "full")
def test_block_backward_for_every_switch(switches, rng):
    config = tiny(**switches)
    inputs = [rng.standard_normal((BATCH, LENGTH, WIDTH)), rng.standard_normal((WIDTH, 3 * WIDTH)) / 2,
              rng.standard_normal((WIDTH, WIDTH)) / 2, rng.standard_normal((WIDTH, 4 * WIDTH)) / 2,
              rng.standard_normal((4 * WIDTH, WIDTH)) / 4]

    def forward(*a):
        return layers.block(*a, config)[0]

    for index, name in enumerate(["h", "qkv", "out", "up", "down"]):
        check_vjp(forward, lambda g: layers.block_backward(g, layers.block(*inputs, config)[1], config), inputs,
                  index, rng, f"block_backward {switches} d/d{name}")


def model_gradcheck(config, rng, perturb=None):
    """gradcheck of the whole model's loss with respect to every parameter."""
    parameters = init_parameters(config)
    sequences = make_task(config.task, config.length, 8, 4, seed=1).train  # (8, 7)
    gradients = loss_and_gradients(parameters, sequences, config.length + 1, config)[1]
    for name in PARAMETERS:
        def loss(value, name=name):
            return loss_of({**parameters, name: value}, sequences, config.length + 1, config)

        gradient = gradients[name] if perturb is None else perturb(name, gradients[name])
        gradcheck(loss, lambda value, g=gradient: g, parameters[name], rng=rng, name=f"loss d/d{name}")


@pytest.mark.parametrize("switches", SWITCHES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "full")
def test_the_models_loss_gradient_for_every_parameter(switches, rng):
    model_gradcheck(tiny(**switches), rng)


def test_the_checker_rejects_a_transposed_attention_backward(rng):
    inputs = [rng.standard_normal((BATCH, LENGTH, WIDTH)), rng.standard_normal((WIDTH, 3 * WIDTH)) / 2,
              rng.standard_normal((WIDTH, WIDTH)) / 2]

    def transposed(g):
        grads = layers.attention_backward(g, layers.attention(*inputs, HEADS, True, True)[1])
        return grads[0], grads[1], grads[2].T  # the out weight's gradient, wrongly transposed

    with pytest.raises(AssertionError, match=r"gradcheck\(attention_backward\)"):
        check_vjp(lambda *a: layers.attention(*a, HEADS, True, True)[0], transposed, inputs, 2, rng,
                  "attention_backward")


def test_the_checker_rejects_a_slightly_wrong_model_gradient(rng):
    with pytest.raises(AssertionError, match=r"gradcheck\(loss d/dembeddings\)"):
        model_gradcheck(tiny(), rng, perturb=lambda name, g: g * 1.01 if name == "embeddings" else g)


def test_the_loss_falls_clearly_on_the_full_model():
    config = TrainingConfig(depth=2, width=16, heads=2, length=4, train_size=1024, validation_size=64, steps=200,
                            eval_every=50, learning_rate=1e-2)
    run = Training(config)
    untrained = run.validation_loss()
    curve = list(run)
    assert [p["step"] for p in curve] == [50, 100, 150, 200]
    assert curve[-1]["val_loss"] < 0.15 * untrained, (untrained, curve)  # chance is ln 10 ≈ 2.3: from there to < 0.4
    assert curve[-1]["train_loss"] < 0.5 * curve[0]["train_loss"], curve


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    config = dataclasses.replace(tiny(), steps=20, eval_every=10)
    first, again = list(Training(config)), list(Training(config))
    assert first == again
    assert list(Training(dataclasses.replace(config, seed=1))) != first


def test_generation_appends_the_most_likely_tokens():
    config = tiny()
    parameters = init_parameters(config)
    prompts = make_task("reverse", 3, 4, 2, seed=0).validation[:, :4]  # (2, 4) "abc|"
    answers = generate(parameters, prompts, 3, config)
    assert answers.shape == (2, 3) and len(decode(answers[0])) == 3
    from explainer.training import forward
    first = forward(parameters, prompts, config)[0][:, -1].argmax(axis=-1)
    np.testing.assert_array_equal(answers[:, 0], first)


def test_the_grid_holds_every_ablation_at_both_depths():
    grid = ablation_grid()
    assert len(grid) == 10
    assert grid[("no positions", 8)].positional == "none" and grid[("no causal mask", 2)].causal_mask is False
    assert grid[("full", 8)] == TrainingConfig(depth=8)


@pytest.mark.parametrize(("switches", "message"), [
    ({"positional": "alibi"}, "positional"),
    ({"depth": 25}, "depth must be an integer in 1..24"),
    ({"width": 32, "heads": 3}, "width must split into heads"),
    ({"causal_mask": 1}, "causal_mask must be True or False"),
    ({"task": "sort"}, "task must be one of"),
])
def test_bad_configs_name_the_field(switches, message):
    # The architecture is checked by the same function as the ablation lab's (explainer.layers.check_architecture).
    with pytest.raises(ValueError, match=f"TrainingConfig: {message}"):
        TrainingConfig(**switches)


def test_a_run_that_overflows_stops_and_says_so_never_raises():
    run = Training(dataclasses.replace(tiny(norm="none"), steps=10, eval_every=5))
    run.parameters["embeddings"] *= 1e300  # the stream overflows in the first block
    point = run.chunk()
    assert run.diverged and run.done and run.step == 0
    assert np.isnan(point["train_loss"]) and list(run) == []
