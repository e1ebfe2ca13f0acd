"""Private-PGM's estimation in numpy on the junction tree: models too sparse for a joint table.

The dense estimator (:mod:`synthflow.generators._pgm_dense`) holds the whole joint
table, which is fastest when the measured cliques join every column to every other (the
release's six columns: one junction-tree node of 230,400 cells, the joint itself). When
they do not, the joint can be far larger than the model: a workload fit on the 9-column
affairs survey in tree mode has a joint of 2,177,280 cells but a junction tree of 60,552
(one node of 60,480 and two of 36): the dense fit takes 72 s, this one 8.4 s
(``benchmarks/pgm_estimators.py``). Models whose joint is too large to hold, or whose
cliques the dense layout cannot place, come here too, unless their tree itself exceeds
:data:`~synthflow.generators._pgm_dense_layout.DENSE_CELLS` cells (then mbi's jax path).

The algorithm is the same (mbi 1.1.0's objective, start and Armijo step, with the
momentum of :mod:`synthflow.generators._pgm_descent`), with the marginals computed as mbi's
``message_passing`` does: the clique log-potentials are summed into the junction tree's
nodes, calibrated by sum-product message passing in log space (one pass up and one down
a spanning tree of the node graph), and each measured clique's marginal is a sum over its
node's belief. Both parameterise the same exponential family by the same clique
potentials, so from the same start the two estimators take the same steps
(``tests/unit/generators/test_pgm_junction.py`` checks it against the dense fit and mbi).

Everything here is post-processing of released values: only the noisy marginals, their
cliques and noise sd, the public total and the public structural zeros enter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

from synthflow.generators._junction import junction_tree
from synthflow.generators._pgm_dense_layout import lipschitz
from synthflow.generators._pgm_descent import descend, evaluations
from synthflow.generators._pgm_tables import _broadcast

__all__ = ["junction_cells", "mirror_descent_junction"]

Clique = tuple[str, ...]

_FORBIDDEN = -1e9


def junction_cells(names: Sequence[str], sizes: Sequence[int], cliques: Sequence[Clique]) -> int:
    """Cells of the junction tree's nodes together (public: domain and cliques only)."""
    size = dict(zip(names, (int(s) for s in sizes), strict=True))
    nodes, _ = junction_tree(names, sizes, cliques)
    return sum(math.prod(size[a] for a in nd) for nd in nodes)


@dataclass(frozen=True)
class _Tree:
    """The junction tree's nodes, a pass order over a spanning tree, and each clique's home."""

    nodes: list[Clique]
    order: list[int]
    """Nodes in depth-first preorder from node 0 (every node after its parent)."""
    parent: dict[int, int]
    home: list[int]
    """Per clique (the potentials' order), the first node that contains it."""

    @classmethod
    def of(cls, names: Sequence[str], sizes: Sequence[int], cliques: Sequence[Clique]) -> _Tree:
        nodes, _ = junction_tree(names, sizes, cliques)
        graph = nx.Graph()
        graph.add_nodes_from(range(len(nodes)))
        for i in range(len(nodes)):
            for j in range(i + 1, len(nodes)):
                # The maximal cliques of a chordal graph: a spanning tree of the largest
                # separators is a junction tree. Weight 0 joins disconnected parts (an
                # empty separator passes their normalising constant, nothing else).
                graph.add_edge(i, j, weight=len(set(nodes[i]) & set(nodes[j])))
        tree = nx.maximum_spanning_tree(graph) if len(nodes) > 1 else graph
        order = list(nx.dfs_preorder_nodes(tree, 0))
        parent = dict(nx.dfs_predecessors(tree, 0))
        home = [next(i for i, nd in enumerate(nodes) if set(cl) <= set(nd)) for cl in cliques]
        return cls(nodes=nodes, order=order, parent=parent, home=home)


def _logsumexp(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """log(sum(exp(x))) over ``axis``, each slice shifted by its own largest value.

    As scipy's ``logsumexp``, without its overhead. Not one shift for the whole table: a
    message is added to another node's potentials, which can make up any difference, so
    a slice far below the table's largest value must keep its exact log-mass (one global
    shift turned it into -inf and gave nodes that disagree, or NaN).
    """
    top = x.max(axis=axis, keepdims=True)
    top[~np.isfinite(top)] = 0.0  # an all-forbidden (-1e9) or empty slice
    shifted = np.subtract(x, top)  # one temporary, exponentiated in place
    np.exp(shifted, out=shifted)
    with np.errstate(divide="ignore"):
        out = np.log(shifted.sum(axis=axis, keepdims=True)) + top
    return out.squeeze(axis=axis)


def _message(belief: np.ndarray, src: Clique, dst: Clique) -> np.ndarray:
    """log-sum-exp of ``belief`` (axes ``src``) onto the separator, broadcast to ``dst``."""
    drop = tuple(i for i, a in enumerate(src) if a not in dst)
    kept = tuple(a for a in src if a in dst)
    summed = _logsumexp(belief, drop) if drop else belief
    return _broadcast(np.asarray(summed), kept, dst) if kept else np.asarray(summed)


def _down(belief: np.ndarray, up: np.ndarray, src: Clique, dst: Clique) -> np.ndarray:
    """The message from node ``src`` (its full ``belief``) to its child ``dst``.

    ``up`` is the child's message to ``src`` (broadcast to ``src``'s axes, size 1 off the
    separator): the separator's log-sum of the belief, less ``up``, equals the log-sum of
    the belief without the child's message (sum-product). A separator value whose
    message up is ``-inf`` (no mass) sends ``-inf`` back.
    """
    drop = tuple(i for i, a in enumerate(src) if a not in dst)
    kept = tuple(a for a in src if a in dst)
    if not drop:
        summed = belief - up
    else:
        total = _logsumexp(belief, drop)
        own = np.asarray(up).squeeze(axis=drop) if np.ndim(up) else np.asarray(up)
        with np.errstate(invalid="ignore"):
            summed = np.where(np.isneginf(own), -np.inf, total - own)
    return _broadcast(np.asarray(summed), kept, dst) if kept else np.asarray(summed)


def _marginal(table: np.ndarray, node: Clique, clique: Clique) -> np.ndarray:
    """The sum of ``table`` (axes ``node``) onto ``clique``, axes in the clique's order."""
    drop = tuple(i for i, a in enumerate(node) if a not in clique)
    kept = [a for a in node if a in clique]
    return np.transpose(table.sum(axis=drop), [kept.index(a) for a in clique])


def mirror_descent_junction(
    names: Sequence[str],
    sizes: Sequence[int],
    measurements: Sequence[tuple[Clique, np.ndarray, float]],
    potentials: Mapping[Clique, np.ndarray],
    *,
    total: float,
    iters: int,
    momentum: bool = True,
) -> list[tuple[Clique, np.ndarray]]:
    """The fitted model's junction-tree marginals: (node, counts summing to ``total``).

    Args:
        names: Column names (the domain's order).
        sizes: Number of bins per column.
        measurements: ``(clique, noisy counts (clique's axis order), noise sd)``: released.
        potentials: Starting log-potential of each clique (every measured clique must be
            among them); ``-1e9`` marks a forbidden cell, which stays at zero.
        total: Known (public) number of records.
        iters: Plain mirror-descent iterations this fit stands for (as the dense fit).
        momentum: Nesterov momentum with restarts (the default).
    """
    size = dict(zip(names, (int(s) for s in sizes), strict=True))
    cliques = [tuple(cl) for cl in potentials]
    tree = _Tree.of(names, sizes, cliques)
    shapes = [tuple(size[a] for a in nd) for nd in tree.nodes]
    weight, target = _targets(cliques, measurements, potentials)
    children: dict[int, list[int]] = {i: [] for i in range(len(tree.nodes))}
    for child, par in tree.parent.items():
        children[par].append(child)

    by_size = sorted(range(len(cliques)), key=lambda k: -len(cliques[k]))
    done: dict[int, list[int]] = {i: [] for i in range(len(tree.nodes))}

    def oracle(theta: tuple[np.ndarray, ...]) -> tuple[tuple[np.ndarray, ...], list[np.ndarray]]:
        tables = _calibrate(tree, children, shapes, cliques, theta, total)
        mus: list[np.ndarray] = [np.zeros(0)] * len(cliques)
        for k in by_size:  # from the smallest marginal already summed that holds the clique
            cl, h = cliques[k], tree.home[k]
            src, axes = tables[h], tree.nodes[h]
            for j in done[h]:
                if set(cl) <= set(cliques[j]) and mus[j].size < src.size:
                    src, axes = mus[j], cliques[j]
            mus[k] = _marginal(src, axes, cl)
            done[h].append(k)
        for finished in done.values():
            finished.clear()
        return tuple(mus), tables

    def loss_grad(
        mu: tuple[tuple[np.ndarray, ...], list[np.ndarray]],
    ) -> tuple[float, tuple[np.ndarray, ...]]:
        grads = tuple(w * (m - y) for m, y, w in zip(mu[0], target, weight, strict=True))
        loss = 0.5 * sum(
            float((g * (m - y)).sum()) for g, m, y in zip(grads, mu[0], target, strict=True)
        )
        return loss, grads

    measured = [tuple(cl) for cl, _, _ in measurements]
    lip = lipschitz(size, measured, [sd for _, _, sd in measurements]) or 1.0
    _, tables = descend(
        oracle,
        loss_grad,
        lambda m: m[0],
        tuple(np.asarray(potentials[cl], dtype=np.float64) for cl in cliques),
        alpha=2.0 / (lip * total),
        budget=evaluations(iters, momentum=momentum),
        momentum=momentum,
    )
    for cl, values in potentials.items():  # structural zeros: exactly zero
        mask = np.asarray(values) <= _FORBIDDEN / 10
        if mask.any():
            for i, nd in enumerate(tree.nodes):
                if set(cl) <= set(nd):
                    tables[i] = np.where(_broadcast(mask, tuple(cl), nd), 0.0, tables[i])
    return list(zip(tree.nodes, tables, strict=True))


def _targets(
    cliques: list[Clique],
    measurements: Sequence[tuple[Clique, np.ndarray, float]],
    potentials: Mapping[Clique, np.ndarray],
) -> tuple[list[float], list[np.ndarray]]:
    """Per clique, the measurements' total precision and their precision-weighted mean.

    Several measurements of one clique combine into their precision-weighted mean (the
    same gradient; the loss changes by a constant).
    """
    index = {cl: i for i, cl in enumerate(cliques)}
    weight = [0.0] * len(cliques)
    target = [np.zeros(np.shape(potentials[cl])) for cl in cliques]
    for cl, noisy, sd in measurements:
        prec = 1.0 / max(float(sd), 1e-12) ** 2
        weight[index[tuple(cl)]] += prec
        shaped = np.asarray(noisy, float).reshape(target[index[tuple(cl)]].shape)  # flat: C order
        target[index[tuple(cl)]] = target[index[tuple(cl)]] + prec * shaped
    target = [t / w if w > 0 else t for t, w in zip(target, weight, strict=True)]
    return weight, target


def _calibrate(  # noqa: PLR0917  (the fit's fixed parts and one step's potentials)
    tree: _Tree,
    children: dict[int, list[int]],
    shapes: list[tuple[int, ...]],
    cliques: list[Clique],
    theta: tuple[np.ndarray, ...],
    total: float,
) -> list[np.ndarray]:
    """Each junction-tree node's table of counts (summing to ``total``) under ``theta``.

    The clique log-potentials summed into their nodes, calibrated by sum-product message
    passing in log space: one pass up the spanning tree and one down.
    """
    log = [np.zeros(s) for s in shapes]
    for cl, h, values in zip(cliques, tree.home, theta, strict=True):
        log[h] += _broadcast(values, cl, tree.nodes[h])  # in place: nodes are large
    up: dict[int, np.ndarray] = {}  # child -> its message to its parent
    partial: list[np.ndarray] = [np.zeros(())] * len(tree.nodes)  # potentials + ups
    for i in reversed(tree.order):
        partial[i] = log[i]  # owned by this call: summed into in place
        for c in children[i]:
            partial[i] += up[c]
        if i in tree.parent:
            up[i] = _message(partial[i], tree.nodes[i], tree.nodes[tree.parent[i]])
    # Down the tree, each node's belief once: its message to a child is the belief's
    # log-sum onto their separator less the child's own message up (sum-product's
    # division), not a belief re-summed without that child for every child.
    beliefs: list[np.ndarray] = [np.zeros(())] * len(tree.nodes)
    down: dict[int, np.ndarray] = {}  # child -> its parent's message to it
    for i in tree.order:
        beliefs[i] = partial[i]
        if i in down:
            beliefs[i] += down[i]
        for c in children[i]:
            down[c] = _down(beliefs[i], up[c], tree.nodes[i], tree.nodes[c])
    tables = []
    for table in beliefs:  # each owned here: made the node's table in place
        table -= table.max()
        np.exp(table, out=table)  # forbidden cells: exp(-1e9) == 0.0 exactly
        table *= total / table.sum()
        tables.append(table)
    return tables
