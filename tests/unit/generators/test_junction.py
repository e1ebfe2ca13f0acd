"""Our junction tree (no jax) against Private-PGM's own, on random clique sets."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synthflow.generators._junction import junction_tree

mbi = pytest.importorskip("mbi")


def _mbi_tree(names, sizes, cliques):
    domain = mbi.Domain(tuple(names), tuple(sizes))
    jtree, order = mbi.junction_tree.make_junction_tree(domain, cliques)
    return [tuple(n) for n in jtree.nodes], list(order)


@pytest.mark.parametrize("seed", range(40))
def test_nodes_and_order_are_mbis(seed):
    # Random domains of 3-9 columns and 1-12 cliques of 1-3 columns (trees, forests,
    # cycles and isolated columns all occur), sizes 2-40 with ties.
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 10))
    names = [f"c{i}" for i in range(d)]
    rng.shuffle(names)
    sizes = [int(s) for s in rng.choice([2, 3, 5, 5, 12, 40], size=d)]
    cliques = []
    for _ in range(int(rng.integers(1, 13))):
        k = int(rng.integers(1, 4))
        cliques.append(tuple(str(x) for x in rng.choice(names, size=k, replace=False)))
    ours = junction_tree(names, sizes, cliques)
    assert ours == _mbi_tree(names, sizes, cliques)


def test_the_release_models_tree_and_a_chain():
    names = ["a", "b", "c", "d"]
    chain = [("a", "b"), ("b", "c"), ("c", "d")]
    nodes, order = junction_tree(names, [2, 3, 4, 5], chain)
    assert nodes == [("a", "b"), ("b", "c"), ("c", "d")]
    assert (nodes, order) == _mbi_tree(names, [2, 3, 4, 5], chain)
    pairs = list(itertools.combinations(names, 2))  # all pairs: one clique of everything
    nodes, _ = junction_tree(names, [2, 3, 4, 5], pairs)
    assert nodes == [("a", "b", "c", "d")]
