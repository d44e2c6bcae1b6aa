"""Sphinx configuration of the libtopomap documentation.

Build (the ``docs`` extra installs Sphinx, numpydoc and sphinx-argparse)::

    pip install -e '.[docs,plot]'
    sphinx-build -W -b html docs docs/_build/html

The gallery's pictures are drawn at build time by ``docs/gallery/make_gallery.py`` (through
``libtopomap plot``) into ``docs/gallery/_generated/``, which git ignores.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))
sys.path.insert(0, os.path.dirname(HERE))  # the checkout, when libtopomap is not installed

import libtopomap  # noqa: E402

project = "libtopomap"
author = "the libtopomap developers"
copyright = "the libtopomap developers, BSD-3-Clause"
version = release = libtopomap.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinxarg.ext",
    "ltm_docs",
]

exclude_patterns = ["_build", "gallery/_generated/*.svg", "gallery/make_gallery.py"]
templates_path = []
html_theme = "alabaster"
html_static_path = []
html_title = f"libtopomap {release}"

# The API reference documents each module's ``__all__`` (packages re-export from their submodules).
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc sections carry the types
autodoc_mock_imports = ["scotchpy", "simgrid"]

numpydoc_show_class_members = False  # autodoc's :members: lists them; numpydoc's tables would need stubs
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True

# the tour shows the README's own code examples (ltm_docs reads them)
ltm_readme = os.path.join(os.path.dirname(HERE), "README.md")
