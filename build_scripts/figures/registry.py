"""The lessons' illustrations by name: each is a function (theme) -> matplotlib Figure, declared with @illustration.

Authors place one with `/// figure | name` (build_scripts/markdown/figure.py). Illustrations take their numbers
from `explainer`, so a figure and the text around it cannot disagree.

The declarations are also read from the modules' source, without importing them (`declarations`): a build whose
figures are all cached checks names and cache keys without loading matplotlib. Each declaration carries the source
its picture depends on: the function, the module-level helpers and constants it uses (transitively), and the
module's imports, so editing a shared helper re-renders exactly the figures that use it.
"""

import ast
import difflib
import functools
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# Modules that declare illustrations (read as source; imported only to draw).
ILLUSTRATION_MODULES = ["build_scripts.figures.illustrations", "build_scripts.figures.training_figures",
                        "build_scripts.figures.diagrams"]

_REGISTERED: dict[str, Callable] = {}  # filled by @illustration when a module is imported


def illustration(name: str, *, alt: str, sandbox: str = "") -> Callable:
    """Declare the decorated function (theme -> Figure) the illustration called `name`; `alt` describes it.

    `sandbox` names the sandbox whose description the picture draws, if any: its module is then part of the figure's
    cache key, as for the sandbox's own static view.
    """

    def register(function: Callable) -> Callable:
        known = _REGISTERED.get(name)
        if known and (known.__module__, known.__qualname__) != (function.__module__, function.__qualname__):
            raise ValueError(f"illustration {name!r} is declared twice")  # (a reloaded module may declare again)
        _REGISTERED[name] = function
        return function

    return register


@dataclass(frozen=True)
class Declaration:
    """An illustration as its module's source declares it."""

    name: str
    alt: str
    module: str
    function: str
    source: str  # what the picture depends on, for the cache key
    sandbox: str = ""  # the sandbox whose description it draws (its module and the static renderer count too)

    def load(self) -> Callable:
        """The figure function itself (imports its module)."""
        return load(self.name, self.module)


def load(name: str, module: str) -> Callable:
    """The figure function `name`, declared in `module` (imported if it is not yet)."""
    importlib.import_module(module)
    return _REGISTERED[name]


def _decorator_arguments(node: ast.FunctionDef) -> tuple[str, str, str] | None:
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "illustration":
            keywords = {k.arg: k.value for k in decorator.keywords}
            try:
                return (ast.literal_eval(decorator.args[0]), ast.literal_eval(keywords.get("alt")),
                        ast.literal_eval(keywords.get("sandbox", ast.Constant(""))))
            except (IndexError, ValueError):
                raise ValueError(f"line {node.lineno}: @illustration needs a literal name, alt text and sandbox "
                                 "name") from None
    return None


def _segment(lines: list[str], node: ast.stmt) -> str:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "".join(lines[first - 1 : node.end_lineno])


def _top_level_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return [t.id for t in targets if isinstance(t, ast.Name)]


@functools.cache
def _read_module(path: Path, mtime_ns: int, module: str) -> dict[str, Declaration]:
    text = path.read_text(encoding="utf-8")
    tree, lines = ast.parse(text), text.splitlines(keepends=True)
    defined = {name: node for node in tree.body for name in _top_level_names(node)}
    imports = "".join(_segment(lines, n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    found = {}
    for node in tree.body:
        arguments = isinstance(node, ast.FunctionDef) and _decorator_arguments(node)
        if not arguments:
            continue
        needed, queue = {node.name}, [node]
        while queue:  # the module-level helpers and constants the function uses, and theirs
            for used in ast.walk(queue.pop()):
                if isinstance(used, ast.Name) and used.id in defined and used.id not in needed:
                    needed.add(used.id)
                    queue.append(defined[used.id])
        source = imports + "".join(_segment(lines, n) for n in tree.body if set(_top_level_names(n)) & needed)
        found[arguments[0]] = Declaration(arguments[0], arguments[1], module, node.name, source, arguments[2])
    return found


def declarations() -> dict[str, Declaration]:
    """Every declared illustration by name, read from source (nothing is imported)."""
    found = {}
    for module in ILLUSTRATION_MODULES:
        path = Path(importlib.util.find_spec(module).origin)
        for name, declaration in _read_module(path, path.stat().st_mtime_ns, module).items():
            if name in found:
                raise ValueError(f"illustration {name!r} is declared in {found[name].module} and {module}")
            found[name] = declaration
    return dict(sorted(found.items()))


def get_declaration(name: str) -> Declaration:
    """The illustration called `name`, or ValueError naming the closest one and listing all."""
    known = declarations()
    if name not in known:
        match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
        hint = f" (did you mean {match[0]!r}?)" if match else ""
        raise ValueError(f"unknown figure {name!r}{hint}; valid: {', '.join(known)}")
    return known[name]
