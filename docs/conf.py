"""Configuration of the privnoise documentation (Sphinx, numpydoc docstrings, Markdown pages through MyST).

Build it with ``make docs`` (``sphinx -W``: every warning, a broken reference included, fails the build).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import privnoise

# A theme dependency (a11y-pygments) configures the root logger at INFO when it is imported, which would print
# matplotlib's font notes while the tutorials' figures are drawn, even under ``-q``.
logging.getLogger("matplotlib").setLevel(logging.WARNING)

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "privnoise"
author = "The privnoise authors"
copyright = "2026, The privnoise authors"
release = privnoise.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "privnoise_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "_generated/reproduce"]
templates_path: list[str] = []

# Every reference must resolve (see _ext/privnoise_docs.py for what counts as resolved).
nitpicky = True

# Docstrings: numpydoc sections; types stay as written (no cross-reference attempt on prose such as "int or None").
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"show-inheritance": False}

# Markdown pages.
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist", "substitution"]
# counts_<paper>: each reproduction report's row counts, set at build time by _ext/privnoise_docs.py.
myst_substitutions: dict[str, str] = {}
myst_heading_anchors = 3


html_theme = "furo"
html_title = f"privnoise {release}"
html_show_sourcelink = False
