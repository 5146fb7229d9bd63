"""The math of the transformer explainer lessons, in numpy and the standard library only.

The same package runs in CPython (tests, build-time figures) and, as a wheel, in Pyodide in the reader's browser, so
it must never import matplotlib, mkdocs or anything browser-specific.
"""

__version__ = "0.1.0"
