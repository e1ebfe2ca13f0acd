"""Griffe extension: render the docstrings' Sphinx cross-reference roles on the site.

The docstrings name other objects the Sphinx way (``:func:`run_sweep```,
``:class:`~synthflow.config.ReleaseSpec```, ``:mod:`synthflow.flow```), which reads well in
``help()`` and editors; mkdocstrings renders Markdown and would print the roles verbatim.
This extension (mkdocs.yml loads it into the mkdocstrings Python handler) rewrites each
role, once the package is loaded, into an optional cross-reference: a link where the target
is documented on the site, plain code where it is not (a private helper, the standard
library), never a build warning. Sphinx's conventions hold: a leading ``~`` shows the last
name only, ``title <target>`` shows the title, a name without dots is looked up from the
docstring's own scope (module, class, method).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import griffe

# :role:`target`, :role:`~target`, :role:`title <target>`; py: domain prefix allowed.
ROLE = re.compile(
    r":(?:py:)?(?P<role>func|meth|class|mod|attr|data|obj|exc|const|type)"
    r":`(?P<body>[^`\n]+)`"
)
_TITLED = re.compile(r"^(?P<title>.*\S)\s*<(?P<target>[^<>]+)>$")


def convert(text: str, resolve: Any = None) -> str:
    """Rewrite every Sphinx role of ``text`` into an optional autorefs cross-reference.

    Args:
        text: A docstring.
        resolve: Maps a target as written (``~`` removed) to the identifier to link to;
            the target itself when omitted.

    Returns:
        The docstring with ``<autoref identifier="..." optional><code>...</code></autoref>``
        in place of each role (autorefs turns it into a link, or plain code when the
        identifier is not on the site).
    """

    def replace(match: re.Match[str]) -> str:
        body = match["body"].strip()
        titled = _TITLED.match(body)
        if titled:
            title, target = titled["title"], titled["target"].strip().lstrip("~")
        else:
            target = body.lstrip("~")
            title = target.rsplit(".", 1)[-1] if body.startswith("~") else target
        identifier = target.lstrip(".")
        if resolve is not None:
            identifier = resolve(identifier)
        return (
            f'<autoref identifier="{html.escape(identifier)}" optional>'
            f"<code>{html.escape(title)}</code></autoref>"
        )

    return ROLE.sub(replace, text)


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)  # type: ignore[arg-type]


class SphinxRoles(griffe.Extension):
    """Convert the Sphinx roles of every docstring of a loaded package (see the module)."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rewrite the docstrings once the whole package (and its aliases' targets) is loaded.

        Args:
            pkg: The loaded package.
            loader: The loader, whose collection resolves names to canonical paths.
            **kwargs: Unused.
        """
        collection = loader.modules_collection

        for obj in _objects(pkg):
            if obj.docstring is None or ":" not in obj.docstring.value:
                continue

            def resolve(target: str, scope: griffe.Object = obj) -> str:
                first, _, rest = target.partition(".")
                path = target
                try:
                    path = scope.resolve(first) + (f".{rest}" if rest else "")
                except Exception:  # not in scope: an absolute name
                    pass
                try:  # the canonical path is always registered with autorefs
                    return str(collection.get_member(path).canonical_path)
                except Exception:  # not loaded (stdlib, a dependency)
                    return path

            obj.docstring.value = convert(obj.docstring.value, resolve)
