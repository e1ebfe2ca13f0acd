"""Plot and HTML helpers shared by the evaluation report's sections."""

from __future__ import annotations

import base64
import html
import io
import math
from typing import Any

import numpy as np
import pandas as pd

from synthflow.transform import Transformer

_ORIG, _CAND, _BAD, _GOOD = "#4c72b0", "#dd8452", "#c44e52", "#55a868"


def _plt() -> Any:
    import matplotlib  # noqa: PLC0415 (heavy; only when a report is written)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    _plt().close(fig)
    return f'<img src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}"/>'


def _table(df: pd.DataFrame) -> str:
    if df.empty:
        return "<p class='note'>(none)</p>"
    return df.to_html(index=False, float_format=lambda v: f"{v:.6g}", escape=True, na_rep="")


def _h(level: int, text: str) -> str:
    return f"<h{level}>{html.escape(text)}</h{level}>"


def _labels(transformer: Transformer, name: str) -> list[str]:
    return list(transformer.transformations[name].labels)


def _grid(n: int, *, width: float = 12.0, row_h: float = 3.4, ncols: int = 2) -> Any:
    plt = _plt()
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, row_h * nrows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()


def _bars(ax: Any, labels: list[str], series: list[tuple[str, np.ndarray, str]]) -> None:
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
