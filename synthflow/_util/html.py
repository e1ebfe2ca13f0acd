"""HTML reports: Jinja2 templates with one shared stylesheet, plots as PNG data URIs.

Every report (sweep, evaluation, tables comparison) extends ``templates/base.html.j2``
and inlines ``templates/style.css``, so each file travels alone and all read alike.
Jinja2 escapes every value (autoescape); code passes pre-rendered fragments (plots,
tables) through :func:`markupsafe.Markup` only where it built them itself.
"""

from __future__ import annotations

import base64
import io
import math
from functools import cache
from typing import Any

from markupsafe import Markup

__all__ = ["Markup", "fmt", "png", "render"]


@cache
def _environment() -> Any:
    import jinja2  # noqa: PLC0415

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("synthflow", "templates"),
        # HTML templates escape every value; Markdown ones (the datasheet) do not.
        autoescape=lambda name: name is not None and name.endswith((".html.j2", ".html")),
        undefined=jinja2.StrictUndefined,  # a missing value is a bug, not a blank
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = fmt
    return env


def render(template: str, **context: Any) -> str:
    """Render ``templates/<template>`` with ``context`` (and the package version)."""
    from synthflow import __version__  # noqa: PLC0415

    return str(_environment().get_template(template).render(version=__version__, **context))


def png(fig: Any, *, alt: str, dpi: int = 100) -> Markup:
    """A matplotlib Figure as an ``<img>`` with an embedded PNG; the figure is closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    # pyplot figures must be closed; plain Figure objects are garbage collected.
    import matplotlib.pyplot as plt  # noqa: PLC0415

    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode()
    return Markup('<img alt="{}" src="data:image/png;base64,{}">').format(alt, Markup(data))


def fmt(value: Any, digits: int = 3) -> str:  # noqa: PLR0911  (one per kind of value)
    """A number for a reader: ``digits`` significant digits, no Python reprs."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == 0:
            return "0"
        if abs(value) >= 1e6 or abs(value) < 1e-3:
            return f"{value:.{digits}g}"
        decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
        return f"{value:,.{decimals}f}"
    return str(value)
