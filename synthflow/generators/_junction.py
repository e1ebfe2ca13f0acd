"""Junction trees of graphical models over a public domain, without importing jax.

The same construction as Private-PGM's (McKenna et al. 2019; ``mbi.junction_tree``):
the graph whose edges join the columns of each measured clique is triangulated along an
elimination order (a depth-first post-order when the graph is a tree; otherwise the
greedy order that eliminates, at each step, the column whose neighbourhood has the
fewest cells, first in domain order on ties), and the maximal cliques of the
triangulated graph, each in domain order and sorted, are the tree's nodes. The dense
estimator and the sampler only need the nodes and the order, and importing ``mbi``
(jax) costs about a second per process: this module gives both from networkx alone,
and ``tests/unit/generators/test_junction.py`` checks it against ``mbi``'s on random
clique sets. Everything here is a function of the public domain and the cliques.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import networkx as nx

__all__ = ["junction_tree"]

Clique = tuple[str, ...]


def _greedy_order(names: Sequence[str], sizes: dict[str, int], cliques: list[Clique]) -> list[str]:
    """Eliminate, each step, the column whose merged neighbourhood has fewest cells."""
    remaining = list(names)
    live = {tuple(c) for c in cliques}
    order: list[str] = []
    while remaining:
        best, best_cost = remaining[0], math.inf
        for a in remaining:
            cover = set().union(*(set(c) for c in live if a in c))
            cost = math.prod(sizes[v] for v in cover) if cover else 1
            if cost < best_cost:
                best, best_cost = a, cost
        order.append(best)
        remaining.remove(best)
        touching = {c for c in live if best in c}
        merged = tuple(set().union(*(set(c) for c in touching)) - {best})
        live = (live - touching) | {merged}
    return order


def junction_tree(
    names: Sequence[str], sizes: Sequence[int], cliques: Sequence[Clique]
) -> tuple[list[Clique], list[str]]:
    """The junction tree's nodes (sorted, each in domain order) and the elimination order."""
    names = list(names)
    size = dict(zip(names, (int(s) for s in sizes), strict=True))
    cliques = [tuple(c) for c in cliques]
    graph = nx.Graph()
    graph.add_nodes_from(names)
    for cl in cliques:
        graph.add_edges_from(itertools.combinations(cl, 2))
    if not nx.is_empty(graph) and nx.is_tree(graph):
        order = list(nx.dfs_postorder_nodes(graph))
    else:
        order = _greedy_order(names, size, cliques)
    fill = nx.Graph(graph)
    added: set[tuple[str, str]] = set()
    for node in order:
        pairs = set(itertools.combinations(fill.neighbors(node), 2))
        added |= pairs
        fill.add_edges_from(pairs)
        fill.remove_node(node)
    chordal = nx.Graph(graph)
    chordal.add_edges_from(added)
    position = {n: i for i, n in enumerate(names)}
    nodes = sorted(tuple(sorted(c, key=position.__getitem__)) for c in nx.find_cliques(chordal))
    return nodes, order
