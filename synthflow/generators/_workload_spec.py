"""The public workload a release spec implies: the marginals that matter, the empty cells.

Everything here is read from the spec and the configuration's transformation (public);
no data is touched. :func:`workload_from_spec` turns the acceptance criteria into
families of marginals (column tuples), so that a generator can spend its budget where
the release is judged:

* ``one_way``: every column (the 1-way ratio criterion, and every other criterion's
  marginals of single columns);
* ``constrained``: the column sets named together in a synthetic constraint that also
  appear in the criteria's pairs; a plausibility rule is public knowledge that these
  columns depend strongly on each other (e.g. gestation and weight), which is where
  noise spread over near-empty cells biases means and regression slopes most;
* ``pairs``: the other pairs the criteria read: (column, group_by) of every
  conditional mean, (target, feature) and (feature, feature) of every regression,
  and all pairs of the columns of a marginals criterion or a faithfulness rule
  (their values depend on joint structure beyond the 1-way marginals).

:func:`structural_zeros` turns each synthetic constraint into a boolean mask over its
columns' bins: the cells the constraint drops (evaluated on bins exactly as
:func:`synthflow.filtering.binned_violations` does), which a model may give no mass.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthflow.config.model import ReleaseSpec
from synthflow.filtering import binned_violations
from synthflow.transform import Transformer

__all__ = ["Workload", "criteria_pairs", "structural_zeros", "workload_from_spec"]

Clique = tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Workload:
    """Marginals (column tuples in spec order) grouped into budget families."""

    one_way: tuple[Clique, ...]
    constrained: tuple[Clique, ...]
    pairs: tuple[Clique, ...]

    @property
    def cliques(self) -> tuple[Clique, ...]:
        """Every marginal of the workload, families in order."""
        return self.one_way + self.constrained + self.pairs


def _ordered(spec: ReleaseSpec, cols: Iterable[str]) -> Clique:
    order = {c: i for i, c in enumerate(spec.column_names)}
    return tuple(sorted(set(cols), key=order.__getitem__))


def criteria_pairs(spec: ReleaseSpec, *, marginals: bool = True) -> set[Clique]:
    """The pairs of columns the acceptance criteria of ``spec`` read.

    ``marginals=False`` leaves out the pairs that only the criteria reading *every*
    pair of a column set read (marginals and faithfulness): on a wide table the
    generator covers those with a selected tree.
    """
    pairs: set[Clique] = set()
    for c in spec.criteria:
        if c.impl.reads_every_pair and not marginals:
            continue
        pairs.update(_ordered(spec, p) for p in c.impl.pairs_read(c, spec))
    return {p for p in pairs if len(p) == 2}


def workload_from_spec(spec: ReleaseSpec, *, marginals: bool = True) -> Workload:
    """The workload of ``spec``'s acceptance criteria (see the module docstring).

    ``marginals=False``: without the pairs only the marginals and faithfulness criteria
    read (see :func:`criteria_pairs`).
    """
    pairs = criteria_pairs(spec, marginals=marginals)
    read = criteria_pairs(spec)  # the constraint pairs stay, whichever criterion reads them
    constrained: set[Clique] = set()
    for rule in spec.synthetic_constraints:
        cols = _ordered(spec, (cl.column for cl in rule.clauses))
        if len(cols) == 2 and cols in read:
            constrained.add(cols)
        elif len(cols) > 2:  # a wider rule: its pairs that the criteria read
            constrained.update(p for p in itertools.combinations(cols, 2) if p in read)
    order = {c: i for i, c in enumerate(spec.column_names)}

    def key(cl: Clique) -> tuple[int, ...]:
        return tuple(order[c] for c in cl)

    return Workload(
        one_way=tuple((c,) for c in spec.column_names),
        constrained=tuple(sorted(constrained, key=key)),
        pairs=tuple(sorted(pairs - constrained, key=key)),
    )


def structural_zeros(transformer: Transformer) -> dict[Clique, np.ndarray]:
    """Per synthetic constraint's column set, a mask of the bins' cells it forbids.

    The mask has one axis per column of the clique (spec order); ``True`` marks a cell
    every row of which :func:`~synthflow.filtering.binned_violations` drops. Masks of
    rules over the same columns are combined.
    """
    spec = transformer.spec
    sizes = dict(zip(transformer.domain.names, transformer.domain.sizes, strict=True))
    out: dict[Clique, np.ndarray] = {}
    for rule in spec.synthetic_constraints:
        clique = _ordered(spec, (cl.column for cl in rule.clauses))
        shape = tuple(sizes[c] for c in clique)
        grid = np.indices(shape).reshape(len(clique), -1)
        frame = pd.DataFrame({c: grid[i] for i, c in enumerate(clique)})
        mask = binned_violations(frame, (rule,), transformer).reshape(shape)
        out[clique] = out[clique] | mask if clique in out else mask
    return out
