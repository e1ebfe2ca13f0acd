"""``faithfulness``: the share of original records left unmatched (SPEC sec. 6).

The statistic: share of D_T records without a match in D_R (SPEC sec. 6).

The matching rule comes from the spec (:class:`~synthflow.config.MatchRule`): exact
columns (and every column the rule does not name) must be equal; ``ignore`` columns are
not compared; among the near columns at most ``max_near_differences`` may differ, each
by at most ``max_bin_distance`` bins; an exception bin (active only when
the configuration uses that transformation letter) must match exactly.

Exact and fast: identical records are collapsed into types, and the maximum matching
is a maximum flow source -> D_T types (capacity = count) -> D_R types (capacity
unbounded, one edge per matching pair of types) -> sink (capacity = count). A flow of
value ``F`` splits into ``F`` record pairs and any record matching gives such a flow,
so ``F`` equals the record-level maximum matching size.

Kept whole: one criterion kind, one module: its parameters, statistic, sensitivity, exact value,
DP release and report section, so that adding a kind touches its module and the registry
line only ([shape]).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.config.model import Column, CriterionParams, CriterionSpec, MatchRule, ReleaseSpec
from synthflow.criteria._params import param
from synthflow.criteria.protocol import CriterionKind
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from synthflow.criteria.context import Context, Released
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.transform import Transformer


__all__ = [
    "Faithfulness",
    "FaithfulnessParams",
    "MatchingResult",
    "faithfulness_sensitivity",
    "match_offsets",
    "maximum_matching",
    "type_edges",
]


@dataclass(frozen=True, kw_only=True)
class FaithfulnessParams(CriterionParams):
    """The matching rule (SPEC sec. 6)."""

    match: MatchRule = param(schema={"$ref": "#/$defs/match"})
    """When an original and a synthetic record may be matched."""


class Faithfulness(CriterionKind):
    """Unmatched share of a maximum one-to-one matching; sensitivity 1/n."""

    name = "faithfulness"
    Params = FaithfulnessParams
    reads_every_pair = True

    def parse(
        self, where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]
    ) -> FaithfulnessParams:
        """The matching rule."""
        from synthflow.config.columns import parse_match

        return FaithfulnessParams(match=parse_match(f"{where}.match", raw["match"], columns))

    def pairs_read(self, c: CriterionSpec, spec: ReleaseSpec) -> set[tuple[str, ...]]:
        """Every pair of the columns the rule compares (exact and near)."""
        return set(itertools.combinations(c.match.exact + c.match.near, 2))

    def report_section(
        self,
        c: CriterionSpec,
        transformer: Transformer,
        t: np.ndarray | None,
        r: np.ndarray,
        released: Released | None,
    ) -> str:
        """The unmatched records by column (exact report only: it reads the original)."""
        if t is None:
            return ""

        return _faithfulness_section(c, transformer, t, r)

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`_exact_faithfulness`)."""
        return _exact_faithfulness(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`_dp_faithfulness`)."""
        return _dp_faithfulness(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``1/n`` (a replaced row changes the maximum matching by one pair), the threshold."""
        return faithfulness_sensitivity(int(public["n"])), c.threshold

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        return (
            "Share of original records that cannot be paired one-to-one with a close "
            "synthetic record (matching rule in `spec.yaml`; a share, 0 to 1)."
        )


def _exact_faithfulness(c: CriterionSpec, x: Context) -> float:
    from synthflow.criteria.context import need

    rule = need(c.match, "match", c)
    return maximum_matching(x.original, x.candidate, x.transformer, rule).unmatched_share


def _dp_faithfulness(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
    from synthflow.criteria.context import (
        exact_of,
        laplace_release,
    )

    return laplace_release(
        c, x.spec, exact_of(c, x), public={"n": len(x.original)}, ledger=ledger, rng=rng
    )


# --- the report section


def _faithfulness_section(
    c: CriterionSpec, transformer: Transformer, t: np.ndarray, r: np.ndarray
) -> str:
    import pandas as pd

    from synthflow.criteria.plots import (
        BAD,
        bars,
        bin_labels,
        grid,
        heading,
        html_table,
        png,
        pyplot,
    )

    assert c.match is not None
    names = transformer.domain.names
    res = maximum_matching(t, r, transformer, c.match)
    um = t[res.unmatched_original]
    # Which column blocks matches: the matches gained if the column were ignored
    # (set equal in both tables), the rest of the rule unchanged.
    gained = []
    for j in range(len(names)):
        t0, r0 = t.copy(), r.copy()
        t0[:, j] = 0
        r0[:, j] = 0
        gained.append(maximum_matching(t0, r0, transformer, c.match).size - res.size)
    out = [
        heading(2, "Faithfulness: unmatched original records"),
        f"<p>matched {res.size} of {res.n_original}; unmatched {len(um)} "
        f"({res.unmatched_share:.3%}).</p>",
    ]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(names) + 1.0))
    ax.barh(names, gained, color=BAD)
    ax.invert_yaxis()
    ax.set_xlabel("extra matches if this column were ignored", fontsize=8)
    ax.set_title("matches gained if the column were ignored (rest of the rule kept)", fontsize=9)
    ax.tick_params(labelsize=8)
    for y, g in enumerate(gained):
        ax.text(g, y, f" {g}", va="center", fontsize=8)
    fig.tight_layout()
    out += [
        heading(3, "Which column blocks matches"),
        png(fig),
        html_table(pd.DataFrame({"column": names, "extra matches if ignored": gained})),
    ]
    fig, axes = grid(len(names))
    tables = []
    for j, (ax, name) in enumerate(zip(axes, names, strict=False)):
        labels = bin_labels(transformer, name)
        cnt = np.bincount(um[:, j], minlength=len(labels))
        tot = np.bincount(t[:, j], minlength=len(labels))
        share = np.divide(cnt, tot, out=np.zeros(len(labels)), where=tot > 0)
        bars(ax, labels, [("unmatched share", share, BAD)])
        ax.set_title(f"unmatched share by {name}", fontsize=9)
        df = pd.DataFrame({"bin": labels, "original": tot, "unmatched": cnt, "share": share})
        tables.append(heading(3, f"unmatched by {name}") + html_table(df[df.unmatched > 0]))
    fig.tight_layout()
    out += [
        heading(
            3, "Unmatched share by bin (unmatched original records / original records in the bin)"
        ),
        png(fig),
        "<details><summary>tables by column</summary>",
        *tables,
        "</details>",
    ]
    return "".join(out)


# --- the statistic: a maximum matching


@dataclass(frozen=True, kw_only=True)
class MatchingResult:
    """Outcome of the maximum matching (exact; private when D_T is private)."""

    size: int
    """Maximum matching size."""
    n_original: int
    unmatched_original: np.ndarray
    """Per D_T record: True if it is left unmatched by the maximum flow found."""

    @property
    def unmatched_share(self) -> float:
        """``1 - size / n_original`` (the criterion's exact value)."""
        return 1.0 - self.size / self.n_original


def match_offsets(rule: MatchRule, near_idx: list[int]) -> list[dict[int, int]]:
    """All allowed code offsets: ``{column index: offset}`` with at most ``k`` non-zeros."""
    steps = [s for s in range(-rule.max_bin_distance, rule.max_bin_distance + 1) if s]
    out: list[dict[int, int]] = [{}]
    for j in range(1, rule.max_near_differences + 1):
        for cols in itertools.combinations(near_idx, j):
            for offs in itertools.product(steps, repeat=j):
                out.append(dict(zip(cols, offs, strict=True)))
    return out


def _rule_indices(
    rule: MatchRule, transformer: Transformer
) -> tuple[list[int], list[int], dict[int, np.ndarray]]:
    names = transformer.domain.names
    listed = set(rule.exact) | set(rule.near) | set(rule.ignore)
    unknown = listed - set(names)
    if unknown:
        raise ConfigError(f"match rule names unknown columns {sorted(unknown)}")
    # Columns named in no list must be equal too (conservative); ignored ones never count.
    exact = [names.index(c) for c in names if c not in rule.near and c not in rule.ignore]
    near = [names.index(c) for c in rule.near]
    frozen: dict[int, np.ndarray] = {}
    for col, letter, label in rule.exceptions:
        t = transformer.transformations[col]
        if t.name != letter:
            continue  # the exception belongs to another transformation alternative
        j = names.index(col)
        mask = frozen.setdefault(j, np.zeros(t.size, dtype=bool))
        mask[t.labels.index(label)] = True
    return exact, near, frozen


_KEY_LIMIT = 2**62


def _type_keys(
    original: np.ndarray,
    candidate: np.ndarray,
    sizes: np.ndarray,
    exact: list[int],
    near: list[int],
) -> tuple[np.ndarray, np.ndarray, dict[int, int]]:
    """One int64 key per row over the matched columns, and each near column's stride.

    The exact columns become one group id, rank-compressed over both tables whenever the
    mixed-radix value could pass int64 (a 15-column table has a 10^16-cell domain); the
    near columns keep their own radix so that a bin offset is a key offset.
    """
    both = np.concatenate([original, candidate])
    group = np.zeros(len(both), dtype=np.int64)
    bound = 1
    for j in exact:
        if bound * int(sizes[j]) >= _KEY_LIMIT:
            _, group = np.unique(group, return_inverse=True)
            group = group.ravel().astype(np.int64)
            bound = int(group.max()) + 1
        group = group * int(sizes[j]) + both[:, j]
        bound *= int(sizes[j])
    near_cells = int(np.prod([int(sizes[j]) for j in near], dtype=object)) if near else 1
    if bound * near_cells >= _KEY_LIMIT:
        _, group = np.unique(group, return_inverse=True)
        group = group.ravel().astype(np.int64)
        bound = int(group.max()) + 1
    if bound * near_cells >= _KEY_LIMIT:
        raise ConfigError(
            "faithfulness: the near columns' bins are too many to index together "
            f"({near_cells:.3g} cells); list fewer columns under 'near'"
        )
    strides: dict[int, int] = {}
    step = 1
    for j in reversed(near):
        strides[j] = step
        step *= int(sizes[j])
    keys = group * near_cells
    for j in near:
        keys += both[:, j] * strides[j]
    return keys[: len(original)], keys[len(original) :], strides


def _types(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct keys (sorted), count per key, and each row's type index."""
    uniq, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return uniq, counts, inverse


def type_edges(
    original: np.ndarray, candidate: np.ndarray, transformer: Transformer, rule: MatchRule
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Types of both tables and the edges between matching types.

    Returns:
        ``(counts_T, inverse_T, counts_R, inverse_R, edge_T, edge_R)``.
    """
    sizes = np.asarray(transformer.domain.sizes, dtype=np.int64)
    exact, near, frozen = _rule_indices(rule, transformer)
    key_o, key_c, strides = _type_keys(original, candidate, sizes, exact, near)
    keys_t, counts_t, inv_t = _types(key_o)
    keys_r, counts_r, inv_r = _types(key_c)
    # One representative code row per D_T type.
    rep = np.empty((len(keys_t), original.shape[1]), dtype=np.int64)
    rep[inv_t] = original
    src: list[np.ndarray] = []
    dst: list[np.ndarray] = []
    for offsets in match_offsets(rule, near):
        ok = np.ones(len(keys_t), dtype=bool)
        shifted = keys_t.copy()
        for j, off in offsets.items():
            v = rep[:, j] + off
            ok &= (v >= 0) & (v < sizes[j])
            if j in frozen:
                vv = np.clip(v, 0, sizes[j] - 1)
                ok &= ~frozen[j][rep[:, j]] & ~frozen[j][vv]
            shifted += off * strides[j]
        cand = np.flatnonzero(ok)
        pos = np.searchsorted(keys_r, shifted[cand])
        pos = np.minimum(pos, len(keys_r) - 1)
        hit = keys_r[pos] == shifted[cand]
        src.append(cand[hit])
        dst.append(pos[hit])
    return counts_t, inv_t, counts_r, inv_r, np.concatenate(src), np.concatenate(dst)


def maximum_matching(
    original: np.ndarray, candidate: np.ndarray, transformer: Transformer, rule: MatchRule
) -> MatchingResult:
    """Exact maximum matching size between D_T and D_R records under ``rule``."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_flow

    n = len(original)
    if n == 0:
        raise ValueError("faithfulness needs a non-empty original")
    if len(candidate) == 0:
        return MatchingResult(size=0, n_original=n, unmatched_original=np.ones(n, dtype=bool))
    counts_t, inv_t, counts_r, _, e_t, e_r = type_edges(original, candidate, transformer, rule)
    a, b = len(counts_t), len(counts_r)
    source, sink = 0, a + b + 1
    big = int(max(counts_t.max(), counts_r.max()))
    rows = np.concatenate([np.zeros(a, np.int64), 1 + e_t, 1 + a + np.arange(b)])
    cols = np.concatenate([1 + np.arange(a), 1 + a + e_r, np.full(b, sink, np.int64)])
    caps = np.concatenate([counts_t, np.full(len(e_t), big), counts_r]).astype(np.int32)
    graph = sp.csr_matrix((caps, (rows, cols)), shape=(a + b + 2, a + b + 2))
    res = maximum_flow(graph, source, sink, method="dinic")
    # Flow through each D_T type = flow on its source edge.
    flow = res.flow.tocsr()
    out_of_source = np.asarray(flow[source].toarray()).ravel()[1 : a + 1]
    unmatched_per_type = counts_t - out_of_source
    # Mark that many records of each type as unmatched (which ones is immaterial).
    order = np.argsort(inv_t, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts_t)[:-1]])
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - np.repeat(starts, counts_t)
    unmatched = rank < unmatched_per_type[inv_t]
    return MatchingResult(size=int(res.flow_value), n_original=n, unmatched_original=unmatched)


def faithfulness_sensitivity(n: int) -> float:
    """Sensitivity ``1/n`` of ``1 - M/n`` under replace-one on D_T.

    Removing one D_T record lowers the maximum matching ``M`` by at most 1 (drop its
    pair) and adding one raises it by at most 1, so replacing one moves ``M`` by at most
    1 and ``1 - M/n`` (n public) by at most ``1/n``.
    """
    if n < 1:
        raise ValueError(f"n ({n}) must be >= 1")
    return 1.0 / n
