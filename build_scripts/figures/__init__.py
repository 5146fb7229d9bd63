"""Static figures, rendered with matplotlib at build time: every sandbox's default view and the lessons'
illustrations, in light and dark, cached and rendered in parallel (`python -m build_scripts.figures --help`)."""
