"""The site's build-time work, for either engine (MkDocs with Material, or Zensical):

    scan docs/ (config.py, scan.py)     every sandbox, figure, quiz and {{ quantity }} checked, file:line errors
      → figure jobs → render            cached and in parallel (build_scripts/figures/jobs.py)
      → publish into the site           figures, browser code, wheel, runtime.json, Pyodide (publish.py)

`python -m build_scripts.pipeline build|serve|check|publish --engine mkdocs|zensical` runs it (engines.py); the
MkDocs plugin (build_scripts/mkdocs_plugin) calls the same functions from MkDocs' events.
"""
