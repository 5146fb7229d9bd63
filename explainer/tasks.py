"""Tiny sequence tasks where order matters, generated in code, with a fixed train/validation split per seed.

A task is a prompt of letters, a separator "|" and an answer: reverse "abcde|" → "edcba", copy "abcde|" → "abcde".
A model reads prompt and answer as one sequence and is scored on predicting the answer's tokens (next-token
prediction on the answer positions); at generation it reads the prompt and writes the answer token by token.
"""

from dataclasses import dataclass

import numpy as np

from explainer._checks import as_choice, as_int

LETTERS = "abcdefghij"
SEPARATOR = "|"
ALPHABET = LETTERS + SEPARATOR  # token i is ALPHABET[i]
TASKS = ("reverse", "copy")


@dataclass(frozen=True)
class TaskData:
    """Whole sequences (prompt, separator, answer) as token ids, split once for a seed."""

    train: np.ndarray  # (N_train, 2n + 1) int
    validation: np.ndarray  # (N_val, 2n + 1) int
    prompt_length: int  # n + 1: the letters and the separator


def answer_for(task: str, letters: np.ndarray) -> np.ndarray:
    """The answer's token ids for prompts `letters` (N, n): reversed or copied."""
    as_choice("task", task, TASKS, caller="answer_for")
    return letters[:, ::-1] if task == "reverse" else letters.copy()


def make_task(task: str = "reverse", length: int = 5, train_size: int = 4096, validation_size: int = 512,
              seed: int = 0) -> TaskData:
    """Distinct random strings of `length` letters, answered by `task`; the validation strings never appear in train."""
    as_int("length", length, caller="make_task", minimum=1, maximum=8)
    possible = len(LETTERS) ** length
    as_int("train_size + validation_size", train_size + validation_size, caller="make_task", minimum=2,
           maximum=possible)
    rng = np.random.default_rng(seed)
    codes = rng.choice(possible, size=train_size + validation_size, replace=False)  # (N,) distinct strings
    letters = codes[:, None] // len(LETTERS) ** np.arange(length)[::-1] % len(LETTERS)  # (N, n) base-10 digits
    separator = np.full((len(codes), 1), ALPHABET.index(SEPARATOR))
    sequences = np.concatenate([letters, separator, answer_for(task, letters)], axis=1)  # (N, 2n + 1)
    return TaskData(sequences[:train_size], sequences[train_size:], length + 1)


def decode(tokens) -> str:
    """Token ids as text: [0, 1, 10] -> "ab|"."""
    return "".join(ALPHABET[int(t)] for t in tokens)
