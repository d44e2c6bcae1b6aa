"""Sphinx helpers of the libtopomap documentation: one source of truth for what the README says.

* ``.. readme-glossary::`` -- the README's glossary table (section "Glossary") as a Sphinx glossary, so
  that pages can write ``:term:`mapping```;
* ``.. readme-code:: HEADING`` -- the code blocks of the README section ``HEADING`` (``:block: N`` picks
  one, counted from 0), so that the tour shows the README's examples without copying them;
* on ``builder-inited``, ``docs/gallery/make_gallery.py`` draws the gallery's pictures with
  ``libtopomap plot`` (skipped when they are newer than the library's plotting code and the script).
"""

from __future__ import annotations

import os
import re
import runpy

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles

_FENCE = re.compile(r"^```(\w*)\s*$")


def readme_sections(text):
    """``{heading: [lines]}`` for every Markdown heading of ``text`` (any level, text without ``#``)."""
    sections, name, lines, fenced = {}, None, [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*$", line)
        if m:
            if name is not None:
                sections[name] = lines
            name, lines = m.group(1), []
        elif name is not None:
            lines.append(line)
    if name is not None:
        sections[name] = lines
    return sections


def code_blocks(lines):
    """``[(language, [lines])]`` of the fenced code blocks in ``lines``."""
    out, cur, lang = [], None, ""
    for line in lines:
        m = _FENCE.match(line)
        if cur is None and m:
            cur, lang = [], m.group(1)
        elif cur is not None and line.startswith("```"):
            out.append((lang, cur))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def _inline(md):
    """Markdown inline markup of a table cell -> reStructuredText."""
    md = md.replace("\\|", "|")
    md = re.sub(r"\*\*(.+?)\*\*", r"\1", md)
    md = re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"*\1*", md)
    return re.sub(r"`([^`]+)`", r"``\1``", md)


def _readme(env):
    path = env.config.ltm_readme
    env.note_dependency(path)
    with open(path, encoding="utf-8") as f:
        return f.read()


class ReadmeCode(Directive):
    """The code blocks of one README section, as literal blocks."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"block": directives.nonnegative_int}

    def run(self):
        env = self.state.document.settings.env
        heading = self.arguments[0]
        sections = readme_sections(_readme(env))
        if heading not in sections:
            raise self.error(f"{env.config.ltm_readme}: no section '{heading}'")
        blocks = code_blocks(sections[heading])
        if "block" in self.options:
            k = self.options["block"]
            if k >= len(blocks):
                raise self.error(f"{env.config.ltm_readme}: section '{heading}' has {len(blocks)} code blocks")
            blocks = [blocks[k]]
        out = []
        for lang, lines in blocks:
            text = "\n".join(lines)
            block = nodes.literal_block(text, text)
            block["language"] = {"bash": "bash", "python": "python", "toml": "toml"}.get(lang, "text")
            out.append(block)
        return out


class RegistryChoices(Directive):
    """Every kind of :data:`libtopomap.vocabulary.REGISTRY` as a section with a name/meaning table."""

    has_content = False

    def run(self):
        from libtopomap.vocabulary import REGISTRY

        rst = []
        for kind, table in REGISTRY.items():
            rst += [kind, "-" * len(kind), "", ".. list-table::", "   :header-rows: 1", "   :widths: 20 80", "",
                    "   * - name", "     - what it is"]
            for name, what in table.items():
                rst += [f"   * - ``{name}``", f"     - {what}"]
            rst.append("")
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(rst, source="libtopomap.vocabulary.REGISTRY"), node)
        return node.children


def _draw_gallery(app):
    script = os.path.join(app.srcdir, "gallery", "make_gallery.py")
    runpy.run_path(script)["make_gallery"](os.path.join(app.srcdir, "gallery", "_generated"))


def setup(app):
    app.add_config_value("ltm_readme", "", "env")
    app.add_directive("readme-code", ReadmeCode)
    app.add_directive("registry-choices", RegistryChoices)
    app.connect("builder-inited", _draw_gallery)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
