"""The site's Content-Security-Policy: scripts only from the site itself, plus the inline scripts its pages hold (the
theme's own: Material writes a few into every page), allowed one by one by their sha256; no `unsafe-inline` script,
no `eval`, nothing from another origin.

One policy for the whole site, not one per page: Material's instant navigation keeps the first page's document (and
so its policy) for the whole visit and runs the inline scripts of every page it brings in, so the first page must
allow them all. The pipeline writes it into every page as a <meta http-equiv> tag; a host that can set headers sends
the same text as a `Content-Security-Policy` header (`python -m build_scripts.pipeline csp` prints it).

Workers take their policy from their own response, never from the page's meta tag: with a meta tag alone, the
Pyodide worker (and Material's search worker, and the service worker) run unrestricted. A host that sets headers
should give `assets/explainer/worker.js` the worker policy below: the only one that allows `'wasm-unsafe-eval'`
(Pyodide compiles WebAssembly), `blob:` scripts and fetches (the worker runs Pyodide's two scripts, and hands
Pyodide the standard library, from the bytes it has checked against their integrity), and the runtime's origin when it
comes from the CDN.
"""

import base64
import hashlib
from pathlib import Path
from urllib.parse import urlsplit

from build_scripts.pipeline.pages import Page, PageError

# Styles may be inline (KaTeX and our figures size and colour elements with style attributes); scripts may not.
PAGE_DIRECTIVES = (
    ("default-src", "'self'"),
    ("script-src", "'self'"),  # + the hashes of the pages' inline scripts
    ("style-src", "'self' 'unsafe-inline'"),
    ("img-src", "'self' data:"),  # data: for the theme's icons in CSS and render.js's one-picture heat maps
    ("font-src", "'self'"),
    ("connect-src", "'self'"),
    ("worker-src", "'self'"),
    ("object-src", "'none'"),
    ("base-uri", "'self'"),
    ("form-action", "'self'"),
)


class InlineHandlerError(PageError):
    """A page has an inline event handler (onclick=…), which the policy would silently block."""


def script_hash(text: str) -> str:
    """A CSP hash source for an inline script's text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def inline_script_hashes(pages: list[Page]) -> list[str]:
    """The hash of every inline script of the site, sorted; an inline event handler is an error naming its page."""
    hashes = set()
    for page in pages:
        if page.handlers:
            tag, attribute, line = page.handlers[0]
            raise InlineHandlerError(f"{page.path}:{line}: <{tag} {attribute}=…> is an inline event handler, which "
                                     f"the site's Content-Security-Policy blocks; attach it from a script file instead "
                                     f"(or set csp: false under the explainer plugin)")
        hashes.update(script_hash(text) for _, text in page.inline_scripts)
    return sorted(hashes)


def page_policy(pages: list[Page]) -> str:
    """The policy of every page."""
    hashes = " ".join(inline_script_hashes(pages))
    return "; ".join(f"{name} {value} {hashes}" if name == "script-src" and hashes else f"{name} {value}"
                     for name, value in PAGE_DIRECTIVES)


def worker_policy(manifest: dict) -> str:
    """The policy of the Pyodide worker (assets/explainer/worker.js), for hosts that can send headers."""
    index = urlsplit(manifest["pyodide"]["indexURL"])
    runtime = f" {index.scheme}://{index.netloc}" if index.netloc else ""
    return "; ".join((
        "default-src 'self'",
        f"script-src 'self'{runtime} 'wasm-unsafe-eval' blob:",
        f"connect-src 'self'{runtime} blob:",
    ))


def meta_tag(policy: str) -> str:
    """The policy as the tag written into every page."""
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'


def describe(policy: str, worker: str | None, site_dir: Path) -> str:
    """What `python -m build_scripts.pipeline csp` prints: the headers to send, one per line, with where."""
    lines = [f"# every page of {site_dir} (its <meta http-equiv> tag holds the same):",
             f"Content-Security-Policy: {policy}"]
    if worker:
        lines += ["# assets/explainer/worker.js only (the Pyodide worker; a page's meta tag does not reach workers):",
                  f"Content-Security-Policy: {worker}"]
    return "\n".join(lines)
