"""Tables of a fitted junction tree: its clique marginals, broadcasting and CDFs."""

from __future__ import annotations

import numpy as np

Clique = tuple[str, ...]


def _mbi() -> object:
    import mbi  # noqa: PLC0415  (jax import costs seconds; only generators that need it pay)

    return mbi


__all__ = ["Clique", "_broadcast", "_cdf", "_junction_tree_marginals", "_mbi"]


def _junction_tree_marginals(model: object) -> list[tuple[Clique, np.ndarray]]:
    """(maximal clique, its marginal scaled to the model's total), calibrated in numpy."""
    import networkx as nx  # noqa: PLC0415
    from scipy.special import logsumexp  # noqa: PLC0415

    mbi = _mbi()
    potentials = model.potentials  # type: ignore[attr-defined]
    factors = {
        tuple(potentials[cl].domain.attributes): np.asarray(potentials[cl].values, np.float64)
        for cl in potentials.cliques
    }
    size = {a: f.shape[i] for axes, f in factors.items() for i, a in enumerate(axes)}
    names = tuple(size)
    domain = mbi.Domain(names, tuple(size[a] for a in names))  # type: ignore[attr-defined]
    jtree, _ = mbi.junction_tree.make_junction_tree(domain, list(factors))  # type: ignore[attr-defined]
    log = {tuple(nd): np.zeros([size[a] for a in nd]) for nd in jtree.nodes}
    for axes, f in factors.items():
        home = next(nd for nd in log if set(axes) <= set(nd))
        log[home] = log[home] + _broadcast(f, axes, home)
    messages: dict[tuple[Clique, Clique], np.ndarray] = {}

    def incoming(node: Clique, skip: Clique | None = None) -> np.ndarray:
        total = log[node]
        for other in jtree.neighbors(node):
            if other != skip:
                total = total + messages[(tuple(other), node)]
        return total

    def send(src: Clique, dst: Clique) -> None:
        belief = incoming(src, skip=dst)
        drop = tuple(i for i, a in enumerate(src) if a not in dst)
        kept = tuple(a for a in src if a in dst)
        messages[(src, dst)] = _broadcast(logsumexp(belief, axis=drop), kept, dst)

    for component in nx.connected_components(jtree):
        root = next(iter(component))
        order = [tuple(nd) for nd in nx.dfs_preorder_nodes(jtree, root)]
        parent = {tuple(k): tuple(v) for k, v in nx.dfs_predecessors(jtree, root).items()}
        for node in reversed(order[1:]):
            send(node, parent[node])
        for node in order[1:]:
            send(parent[node], node)
    total = float(model.total)  # type: ignore[attr-defined]
    tables = []
    for node in log:
        belief = incoming(node)
        tables.append((node, np.exp(belief - logsumexp(belief)) * total))
    return tables


def _broadcast(mask: np.ndarray, clique: Clique, attrs: tuple[str, ...]) -> np.ndarray:
    """``mask`` over ``clique`` broadcast to the axes ``attrs`` (a superset)."""
    perm = sorted(range(len(clique)), key=lambda i: attrs.index(clique[i]))
    m = np.transpose(mask, perm)
    shape = [1] * len(attrs)
    for i in perm:
        shape[attrs.index(clique[i])] = mask.shape[i]
    return m.reshape(shape)


def _cdf(table: np.ndarray) -> np.ndarray:
    """Row-wise CDFs; rows without mass (unreachable parents) become uniform."""
    totals = table.sum(axis=1, keepdims=True)
    k = table.shape[1]
    probs = np.where(totals > 0, table / np.where(totals > 0, totals, 1.0), 1.0 / k)
    cdf = np.cumsum(probs, axis=1)
    # Float rounding must not let a zero-probability bin be chosen: from each row's last
    # bin with mass on, the CDF is exactly 1 (inverse-CDF picks the first bin whose CDF
    # exceeds u < 1, so a bin whose CDF equals its predecessor's is never chosen).
    last = k - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)
    cdf[np.arange(k)[None, :] >= last[:, None]] = 1.0
    return cdf
