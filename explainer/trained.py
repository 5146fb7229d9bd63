"""The model trained when the site is built, shipped with explainer so the ablation lab can run on weights that learned.

It is the experiment's full configuration at depth 8, seed 0 (explainer.training.ablation_grid): a decoder-only
transformer of width 32 trained to reverse strings of five letters, the run the experiment page reports as "full,
depth 8, seed 0". build_scripts/trained_weights.py trains it with explainer.training and writes its final weights,
rounded to float32, into this package (data/TRAINED_FILE); the wheel the reader's browser installs carries the file,
checked by the wheel's sha256 with everything else. The file is made by the build, not kept in git: without it,
`trained_model` says which command makes it.
"""

import functools
import io
import json
from importlib import resources

import numpy as np

TRAINED_FILE = "trained-reverse-depth8.npz"  # in explainer/data/
ARRAYS = ("embeddings", "qkv", "out", "up", "down", "unembedding")  # explainer.layers.init_weights' names
EXPORT_COMMAND = "python -m build_scripts.trained_weights"


class MissingTrainedWeights(RuntimeError):
    """explainer/data/ has no trained weights (a source tree where the build has not run yet)."""


def weights_file():
    """Where the trained weights live inside the package (a Traversable: a file in CPython, in the wheel's files in
    Pyodide)."""
    return resources.files(__package__).joinpath("data", TRAINED_FILE)


@functools.cache
def trained_model() -> tuple[dict, dict[str, np.ndarray]]:
    """(the TrainingConfig's fields, the weights as float64 arrays by name) of the build-time trained model."""
    source = weights_file()
    if not source.is_file():
        raise MissingTrainedWeights(f"explainer/data/{TRAINED_FILE} is missing: the site build makes it "
                                    f"(or run `{EXPORT_COMMAND}`)")
    with np.load(io.BytesIO(source.read_bytes()), allow_pickle=False) as saved:
        config = json.loads(str(saved["config"]))
        weights = {name: saved[name].astype(np.float64) for name in ARRAYS}
    return config, weights


def encode(config: dict, weights: dict[str, np.ndarray]) -> bytes:
    """The file's bytes for a config's fields and its weights: float32 arrays and the config as JSON, in an
    uncompressed .npz (float weights hardly compress). The same input gives the same bytes."""
    buffer = io.BytesIO()
    np.savez(buffer, config=np.array(json.dumps(config, sort_keys=True)),
             **{name: np.asarray(weights[name], dtype=np.float32) for name in ARRAYS})
    return buffer.getvalue()
