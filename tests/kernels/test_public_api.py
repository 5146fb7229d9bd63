"""Every public name of `explainer` resolves to what its docs promise, however the submodules were imported."""

import importlib
import pkgutil
import types

import explainer


def test_every_public_name_resolves_to_a_function_class_or_table_never_a_module():
    for module in pkgutil.walk_packages(explainer.__path__, prefix="explainer."):
        importlib.import_module(module.name)  # binds submodule names on the package, as any import would
    for name in explainer.__all__:
        value = getattr(explainer, name)
        assert not isinstance(value, types.ModuleType), f"explainer.{name} is a module, not the public {name}"
        if callable(value):
            assert value.__doc__, f"explainer.{name} has no docstring"


def test_an_unknown_name_is_an_attribute_error():
    try:
        explainer.rmsnrom  # noqa: B018
    except AttributeError as error:
        assert "rmsnrom" in str(error)
    else:
        raise AssertionError("explainer.rmsnrom should not exist")
