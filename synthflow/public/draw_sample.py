"""Sampling the public model of :mod:`synthflow.public.draw` (public data only)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from synthflow._util.notices import say
from synthflow._util.readers import read_header
from synthflow.config.model import ReleaseSpec
from synthflow.data import load_data
from synthflow.errors import ConfigError, NotEnoughRowsError
from synthflow.filtering import raw_violations
from synthflow.public.draw import PublicModel, _design, fit_public_model

__all__ = ["MAX_ROWS", "check_rows", "draw", "draw_public_file"]

MAX_ROWS = 100_000_000
"""The most rows a public draw or a row count may name: checked before anything
allocates rows x columns (a national register's size is well inside it)."""


def check_rows(rows: int, option: str = "--rows", least: int = 1) -> None:
    """Refuse a row count outside ``[least, MAX_ROWS]`` before anything is allocated.

    Raises:
        ConfigError: Naming the option and the range.
    """
    if rows < least:
        raise ConfigError(f"{option} ({rows:,}) must be at least {least:,}: a count of rows")
    if rows > MAX_ROWS:
        raise ConfigError(
            f"{option} must be between {least:,} and {MAX_ROWS:,} (a national register's "
            f"size is well inside it), not {rows:,}"
        )


_MAX_ROUNDS = 50
"""Rounds of redrawing rows that break a raw constraint before giving up."""


def _pick(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row of ``counts`` (rows of weights, each with a positive sum)."""
    cdf = np.cumsum(counts, axis=1)
    u = rng.random(len(counts)) * cdf[:, -1]
    return np.minimum((u[:, None] >= cdf).sum(axis=1), counts.shape[1] - 1)


def _sample_cells(
    model: PublicModel, codes: np.ndarray, rng: np.random.Generator, nodes: list[int]
) -> None:
    """Draw the columns of ``model.nodes[k]`` for ``k`` in ``nodes`` (in order) into ``codes``."""
    n = len(codes)
    chunk = max(1, 2_000_000 // max(model.sizes))  # rows x cells of one _pick call
    for node in (model.nodes[k] for k in nodes):
        for start in range(0, n, chunk):
            rows = slice(start, min(n, start + chunk))
            if node.parents:
                table = node.counts[codes[rows, node.parents[0]]]
            else:
                table = np.broadcast_to(node.counts, (rows.stop - rows.start, node.counts.size))
            codes[rows, node.column] = _pick(table, rng)


def _raw(model: PublicModel, codes: np.ndarray, j: int, rng: np.random.Generator) -> np.ndarray:
    """Raw values of column ``j`` for its cells in ``codes``."""
    col = model.spec.columns[j]
    if col.kind == "categorical":
        return np.asarray(col.categories, dtype=object)[codes[:, j]]
    per_cell = model.values[j]
    assert per_cell is not None
    raw = np.empty(len(codes), dtype=np.int64)
    for k in np.unique(codes[:, j]):
        rows = np.flatnonzero(codes[:, j] == k)
        vals, counts = per_cell[k]
        raw[rows] = rng.choice(vals, size=len(rows), p=counts / counts.sum())
    return raw


def _rows(model: PublicModel, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` rows: the tree, then each regression target from its features."""
    spec = model.spec
    codes = np.zeros((n, len(model.sizes)), dtype=np.int64)
    _sample_cells(model, codes, rng, list(range(len(model.nodes))))
    frame = pd.DataFrame(
        {c: _raw(model, codes, j, rng) for j, c in enumerate(spec.column_names)},
        columns=list(spec.column_names),
    )
    for reg in model.regressions:
        col = spec.columns[reg.target]
        assert col.domain is not None
        mean = _design(spec, frame, reg.features) @ reg.coef
        value = np.round(mean + rng.choice(reg.residuals, size=n))
        value = np.clip(value, col.domain[0], col.domain[1]).astype(np.int64)
        frame[col.name] = value
        edges = model.edges[reg.target]
        assert edges is not None
        codes[:, reg.target] = np.searchsorted(edges, value, side="right") - 1
        _sample_cells(model, codes, rng, list(reg.redraw))
        for pos in reg.redraw:
            j = model.nodes[pos].column
            frame[spec.column_names[j]] = _raw(model, codes, j, rng)
    return frame


def draw(model: PublicModel, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` rows from ``model``, raw release columns in spec order.

    Rows breaking a raw constraint of the spec are replaced by new draws.

    Raises:
        NotEnoughRowsError: The constraints rejected nearly every draw for 50 rounds.
    """
    if n < 1:
        raise ConfigError(f"the number of rows must be at least 1, not {n}")
    parts: list[pd.DataFrame] = []
    have = 0
    for _ in range(_MAX_ROUNDS):
        want = n - have if not parts else math.ceil((n - have) * 1.2) + 10
        frame = _rows(model, want, rng)
        drop = np.zeros(len(frame), dtype=bool)
        for rule in model.spec.raw_constraints:
            drop |= raw_violations(frame, rule)
        frame = frame.loc[~drop]
        parts.append(frame)
        have += len(frame)
        if have >= n:
            return pd.concat(parts, ignore_index=True).iloc[:n].reset_index(drop=True)
    raise NotEnoughRowsError(
        f"the spec's raw constraints rejected most draws: {have} of {n} rows after "
        f"{_MAX_ROUNDS} rounds; check the constraints against the public sample"
    )


def draw_public_file(
    spec: ReleaseSpec,
    public: str | Path,
    rows: int,
    out: str | Path,
    *,
    seed: int | None = None,
) -> Path:
    """Fit :func:`fit_public_model` on the public file and write ``rows`` drawn rows.

    ``out`` is written as CSV (gzipped when it ends in ``.gz``); the caller checks it
    (never overwritten silently). Returns ``out``.
    """
    if rows < 1:
        raise ConfigError(f"--rows must be at least 1, not {rows}")
    loaded = load_data(public, spec, public=True)
    needed = set(spec.column_names) | {c.source.source for c in spec.columns if c.source}
    extra = [c for c in read_header(public) if c not in needed]
    if extra:
        say(
            f"public-data draw: {str(public)!r} has column(s) the spec does not name, "
            f"not drawn: {extra}"
        )
    model = fit_public_model(spec, loaded.frame)
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
        say(f"public-data draw: seed {seed} (pass --seed {seed} to repeat)")
    frame = draw(model, rows, np.random.default_rng(seed))
    say(
        f"public-data draw: {rows} rows from a model of {model.rows} public rows "
        "(Chow-Liu tree: " + ", ".join(f"{a}->{b}" for a, b in model.tree_edges) + ")"
    )
    frame.to_csv(out, index=False)
    return Path(out)
