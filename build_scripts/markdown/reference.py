"""The `reference` block: the public functions and classes of a module of `explainer`, each with its signature and
docstring, read from the code at build time, so a contributors' page cannot drift from the code.

    /// reference | explainer.figure
    first: [figure, axes]         # optional: these first, in this order; the rest follow in source order
    constants: [COLOR_ROLES]      # optional: module constants to list with their values
    ///

It always lists every public function and class the module defines (names not starting with '_'): one added to the
module appears with the next build, and one without a docstring stops the build with the block's line, since the
reference is made of them. The block becomes Markdown (per name a heading, the signature as a Python code block,
the docstring) before the page's other extensions read it, so each name gets its own entry in the page's table of
contents and in the search index, under either engine.
"""

import importlib
import inspect
import pkgutil
from dataclasses import dataclass

from markdown import Extension

from build_scripts.markdown._blocks import Block, BlockPreprocessor
from explainer.sandbox import closest

NAME = "reference"
PACKAGE = "explainer"  # the only code a page may reference: the build imports what the block names
OPTIONS = ("first", "constants")
WIDE = 88  # characters: a longer signature is written one parameter per line


@dataclass(frozen=True)
class Entry:
    """One function or class as the reference shows it."""

    name: str
    signature: str  # Python, one line or one parameter per line
    doc: str


@dataclass(frozen=True)
class Reference:
    """What one block shows: its entries, then the constants with their values."""

    module: str
    entries: tuple[Entry, ...]
    constants: tuple[tuple[str, object], ...]


def _module(block: Block):
    name = block.argument
    if name != PACKAGE and not name.startswith(f"{PACKAGE}."):
        raise block.error(f"only modules of {PACKAGE} can be referenced (the build imports them)")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        package = importlib.import_module(PACKAGE)
        known = [PACKAGE, *(m.name for m in pkgutil.walk_packages(package.__path__, prefix=f"{PACKAGE}."))]
        raise block.error(f"no such module{closest(name, known)}") from None


def public_objects(module) -> dict[str, object]:
    """The functions and classes `module` defines whose names do not start with '_', in source order."""
    found = [(name, value) for name, value in vars(module).items()
             if not name.startswith("_") and (inspect.isfunction(value) or inspect.isclass(value))
             and value.__module__ == module.__name__]
    return dict(sorted(found, key=lambda item: inspect.getsourcelines(item[1])[1]))


def _listed(block: Block, option: str, valid) -> list[str]:
    """An option that lists names, each one of `valid`."""
    names = block.options.get(option)
    if not isinstance(names, list) or not names or not all(isinstance(name, str) for name in names):
        raise block.error(f"{option} must be a list of names (got {names!r})", option)
    for name in names:
        if name not in valid:
            raise block.error(f"{option}: no public '{name}' in {block.argument}{closest(name, valid)}", option)
        if names.count(name) > 1:
            raise block.error(f"{option}: '{name}' is named twice", option)
    return names


def signature_text(name: str, value) -> str:
    """`name(parameters) -> result` as Python writes it; one parameter per line when that is wider than WIDE."""
    signature = inspect.signature(value)
    if inspect.isclass(value):
        signature = signature.replace(return_annotation=inspect.Signature.empty)
    one_line = f"{name}{signature}"
    if len(one_line) <= WIDE:
        return one_line
    parts, previous = [], None
    for parameter in signature.parameters.values():
        if previous is inspect.Parameter.POSITIONAL_ONLY and parameter.kind is not previous:
            parts.append("/")
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and previous not in (parameter.kind,
                                                                                 inspect.Parameter.VAR_POSITIONAL):
            parts.append("*")
        parts.append(str(parameter))
        previous = parameter.kind
    if previous is inspect.Parameter.POSITIONAL_ONLY:
        parts.append("/")
    result = signature.return_annotation
    returns = "" if result is inspect.Signature.empty else f" -> {inspect.formatannotation(result)}"
    return "\n".join([f"{name}(", *(f"    {part}," for part in parts), f"){returns}"])


def _doc(block: Block, name: str, value) -> str:
    doc = inspect.getdoc(value) or ""
    if inspect.isclass(value) and (value.__doc__ is None or doc.startswith(f"{value.__name__}(")):
        doc = ""  # inherited, or the text a dataclass makes of its signature
    if not doc.strip():
        raise block.error(f"{block.argument}.{name} has no docstring: every public function and class of a "
                          f"referenced module needs one (the reference is made of them)")
    return doc


def read_reference(block: Block) -> Reference:
    """Check a reference block and read the module it names; errors name the line."""
    for key in block.options:
        if key not in OPTIONS:
            raise block.error(f"unknown key '{key}'{closest(str(key), OPTIONS)}; options: {', '.join(OPTIONS)}", key)
    module = _module(block)
    public = public_objects(module)
    first = _listed(block, "first", public) if "first" in block.options else []
    names = [*first, *(name for name in public if name not in first)]
    constants = [name for name, value in vars(module).items() if name.isupper() and not callable(value)]
    shown = _listed(block, "constants", constants) if "constants" in block.options else []
    entries = tuple(Entry(name, signature_text(name, public[name]), _doc(block, name, public[name])) for name in names)
    return Reference(module.__name__, entries, tuple((name, getattr(module, name)) for name in shown))


def _value_text(value) -> str:
    if isinstance(value, (tuple, list, set, frozenset)):
        return ", ".join(f"`{item!r}`" for item in value)
    return f"`{value!r}`"


def reference_markdown(reference: Reference) -> list[str]:
    """The Markdown the block becomes: per entry a heading, its signature and its docstring; then the constants."""
    lines = []
    for entry in reference.entries:
        lines += [f"### `{entry.name}`", "", "```python", *entry.signature.split("\n"), "```", "",
                  *entry.doc.split("\n"), ""]
    if reference.constants:
        lines += [f"Constants of `{reference.module}`:", ""]
        lines += [f"- `{name}`: {_value_text(value)}" for name, value in reference.constants] + [""]
    return lines


class ReferenceExtension(Extension):
    """Adds the `/// reference | module` block."""

    def extendMarkdown(self, md):
        md.registerExtension(self)
        # Last of our blocks, after math (29.1) too (its Markdown need not keep the line count: every other block
        # has been read), before pymdownx.superfences (25) renders the signatures' code blocks.
        md.preprocessors.register(BlockPreprocessor(md, {NAME: self.place}), "explainer-reference", 29.05)

    @staticmethod
    def place(block: Block) -> list[str]:
        return reference_markdown(read_reference(block))


def makeExtension(**kwargs):  # noqa: N802 (the name Python-Markdown looks for)
    return ReferenceExtension(**kwargs)
