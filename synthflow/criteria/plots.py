"""Plot and HTML helpers shared by the evaluation report's sections."""

from __future__ import annotations

import base64
import html
import io
import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.transform import Transformer

ORIG, CAND, BAD, GOOD = "#4c72b0", "#dd8452", "#c44e52", "#55a868"
"""Colours of the original, the candidate, a failure and a pass."""


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (imported on first use)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png(fig: Any) -> str:
    """``fig`` as an inline PNG ``<img>`` (closed after)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    pyplot().close(fig)
    return f'<img src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}"/>'


def sig(x: float | None, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits, one format for a whole table.

    Positional notation from 1e-4 to 1e6 (``0.0008553``, ``165344``), scientific outside
    it (``6.048e-06``); trailing zeros dropped; never ``-0``: a value that rounds to zero
    keeps its significant digits (``-0.001277``, not ``-0.00``). ``None`` and NaN: ``-``.
    """
    if x is None or not math.isfinite(x):
        return "-" if x is None or math.isnan(x) else str(x)
    if x == 0:
        return "0"
    rounded = float(f"{x:.{digits}g}")
    magnitude = math.floor(math.log10(abs(rounded)))
    if not -4 <= magnitude < 6:
        mantissa, exponent = f"{rounded:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
        return f"{mantissa}e{exponent}"
    text = f"{rounded:.{max(0, digits - 1 - magnitude)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


_BAR_WINDOW = 1.0
"""The drawn noise bar stops this many spans (of 0, value and thresholds) beyond them."""


def strip_limits(
    value: float, lines: list[float], half_bar: float
) -> tuple[tuple[float, float], tuple[float, float], bool]:
    """Axis limits, the drawn bar's ends and whether the bar was clipped.

    The axis covers 0, the value and the threshold lines; the +-2 sd bar is drawn in
    full when it ends within ``_BAR_WINDOW`` spans of them, else clipped there (the
    caller marks the clipped ends and prints the full width), so that a bar thousands
    of times wider than the threshold does not squash the value and threshold together.
    """
    lo, hi = min(0.0, value, *lines), max(value, *lines)
    span = (hi - lo) or abs(value) or 1.0
    window = (lo - _BAR_WINDOW * span, hi + _BAR_WINDOW * span)
    bar = (value - half_bar, value + half_bar)
    drawn = (max(bar[0], window[0]), min(bar[1], window[1]))
    clipped = drawn != bar
    a, b = min(lo, drawn[0]), max(hi, drawn[1])
    pad = 0.08 * (b - a or 1.0)
    return (a - pad, b + pad), drawn, clipped


def html_table(df: pd.DataFrame) -> str:
    """``df`` as an HTML table (a note when empty)."""
    if df.empty:
        return "<p class='note'>(none)</p>"
    return df.to_html(index=False, float_format=lambda v: f"{v:.6g}", escape=True, na_rep="")


def heading(level: int, text: str) -> str:
    """An escaped HTML heading."""
    return f"<h{level}>{html.escape(text)}</h{level}>"


def bin_labels(transformer: Transformer, name: str) -> list[str]:
    """The bin labels of column ``name``."""
    return list(transformer.transformations[name].labels)


def grid(n: int, *, width: float = 12.0, row_h: float = 3.4, ncols: int = 2) -> Any:
    """A figure with ``n`` axes in rows of ``ncols`` (unused axes hidden)."""
    plt = pyplot()
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, row_h * nrows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()


def bars(ax: Any, labels: list[str], series: list[tuple[str, np.ndarray, str]]) -> None:
    """Grouped vertical bars, one group per label."""
    x = np.arange(len(labels))
    w = 0.8 / len(series)
    for i, (name, values, color) in enumerate(series):
        ax.bar(x + (i - (len(series) - 1) / 2) * w, values, w, label=name, color=color)
    # Readable at 1280 px: at most ~24 labels per axis (every k-th bin labelled).
    step = max(1, math.ceil(len(labels) / 24))
    ax.set_xticks(x[::step], labels[::step], rotation=90 if len(labels) > 6 else 0, fontsize=9)
    ax.tick_params(axis="y", labelsize=9)
    ax.grid(axis="y", alpha=0.3)
