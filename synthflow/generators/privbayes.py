"""PrivBayes, our own implementation (numpy), pure epsilon-DP.

Zhang, Cormode, Procopiuc, Srivastava, Xiao. "PrivBayes: Private Data Release via
Bayesian Networks." SIGMOD 2014; extended in ACM TODS 42(4), 2017.

The budget ``epsilon`` is split into ``epsilon_1 = epsilon_split * epsilon`` for the
network structure and ``epsilon_2 = epsilon - epsilon_1`` for the conditional tables.

* **Structure.** The first attribute is drawn uniformly (data-independent). Each of the
  next d - 1 attributes and its parent set is chosen among all (attribute, parent set)
  candidates by the exponential mechanism with budget ``epsilon_1 / (d - 1)``, scored by
  the mutual information I(X; Pi) of the data. Parent sets are either every subset of
  the already-chosen attributes of size ``degree`` (degree flavor) or the maximal
  subsets whose table stays theta-useful (theta flavor, TODS 2017 sec. 4.3): a table
  over X and Pi is theta-useful when its average cell count is at least theta times the
  Laplace scale of its noise, i.e. ``|dom X| * |dom Pi| <= n * epsilon_2 / (2 d theta)``.
* **Conditionals.** The joint count tables of the m families (X, Pi) not contained in
  another family get Laplace noise of scale ``2 m / epsilon_2``: replacing one row moves
  two cells by one (L1 sensitivity 2) and the m tables compose to ``epsilon_2``. Each
  attribute's conditional is read off the smallest released joint holding its family
  (PrivBayes releases d - k tables this way). Post-processing clips negative counts to
  zero and normalises per parent configuration (falling back to the noisy marginal of
  X, then uniform, when a parent configuration has no mass).
* **Sampling** draws attributes in the network's topological order.

Domain sizes come from the public :class:`~synthflow.transform.Domain` only, and n
(the row count after raw cleaning) is public. Nothing derived from private data is kept
after ``fit`` except the noisy tables and the DP-selected network.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pandas as pd

from synthflow.errors import DataError
from synthflow.generators._privbayes_math import (
    _encode,
    _inverse_cdf,
    _normalise,
    covering_families,
    mi_sensitivity,
    mutual_information,
    noisy_counts,
)
from synthflow.generators._sampling import systematic_draw
from synthflow.generators.hyperparameters import PrivBayesHyperparameters
from synthflow.generators.protocol import GeneratorBase, check_codes
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "PrivBayes",
    "PrivBayesHyperparameters",
    "covering_families",
    "mi_sensitivity",
    "mutual_information",
    "noisy_counts",
]


class PrivBayes(GeneratorBase):
    """PrivBayes generator (pure epsilon-DP). See the module docstring.

    Args:
        hyperparameters: Flavor, epsilon split and theta or degree.
        epsilon: Total budget of the fit.
    """

    name: ClassVar[str] = "privbayes"
    Hyperparameters: ClassVar[type] = PrivBayesHyperparameters
    systematic: bool = True
    """Sample by systematic uniforms within each parent cell
    (:mod:`synthflow.generators._sampling`); False: i.i.d. uniforms."""

    # ------------------------------------------------------------------ structure
    def _parent_sets(
        self, x: int, chosen: list[int], sizes: list[int], n: int, eps2: float
    ) -> list[tuple[int, ...]]:
        hp = self.hyperparameters
        if hp.flavor == "degree":
            assert hp.degree is not None
            k = min(hp.degree, len(chosen))
            return list(itertools.combinations(chosen, k))
        assert hp.theta is not None
        tau = n * eps2 / (2 * len(sizes) * hp.theta)
        valid = [
            s
            for r in range(len(chosen), 0, -1)
            for s in itertools.combinations(chosen, r)
            if sizes[x] * math.prod(sizes[p] for p in s) <= tau
        ]
        maximal = [s for s in valid if not any(set(s) < set(t) for t in valid)]
        return maximal or [()]

    def _learn_structure(
        self, cols: list[np.ndarray], sizes: list[int], eps1: float, eps2: float, rng: PrivacyRNG
    ) -> list[tuple[int, tuple[int, ...]]]:
        d, n = len(sizes), len(cols[0])
        first = rng.uniform_index(d)
        network: list[tuple[int, tuple[int, ...]]] = [(first, ())]
        chosen = [first]
        step_eps = eps1 / (d - 1) if d > 1 else 0.0
        cache: dict[tuple[int, tuple[int, ...]], float] = {}
        while len(chosen) < d:
            candidates = [
                (x, s)
                for x in range(d)
                if x not in chosen
                for s in self._parent_sets(x, chosen, sizes, n, eps2)
            ]
            scores = []
            for x, s in candidates:
                if (x, s) not in cache:
                    psize = math.prod(sizes[p] for p in s)
                    key = cols[x].astype(np.int64) * psize + (
                        _encode([cols[p] for p in s], [sizes[p] for p in s]) if s else 0
                    )
                    joint = np.bincount(key, minlength=sizes[x] * psize).reshape(sizes[x], psize)
                    cache[(x, s)] = mutual_information(joint)
                scores.append(cache[(x, s)])
            sens = max(
                mi_sensitivity(n, binary=sizes[x] == 2 or (len(s) == 1 and sizes[s[0]] == 2))
                for x, s in candidates
            )
            x, s = candidates[rng.exponential_mechanism(scores, sensitivity=sens, epsilon=step_eps)]
            network.append((x, s))
            chosen.append(x)
        return network

    # ------------------------------------------------------------------ fit / sample
    def fit(
        self, data: pd.DataFrame, *, domain: Domain, ledger: Ledger, rng: PrivacyRNG
    ) -> PrivBayes:
        """Learn a DP Bayesian network and noisy conditionals; charges ``epsilon``.

        Raises:
            DataError: If the data fall outside the public domain or n < 2.
            BudgetExceededError: If the ledger cannot afford ``epsilon``.
        """
        check_codes(data, domain)
        n, d = len(data), len(domain.names)
        if n < 2:
            raise DataError(f"PrivBayes needs at least 2 rows, got {n}")
        sizes = list(domain.sizes)
        cols = [data[name].to_numpy(dtype=np.int64) for name in domain.names]
        eps1 = self.epsilon * self.hyperparameters.epsilon_split if d > 1 else 0.0
        eps2 = self.epsilon - eps1
        if not ledger.can_afford(self.epsilon):
            ledger.charge("privbayes (total)", epsilon=self.epsilon)  # raises with the amounts
        if d > 1:
            ledger.charge(
                f"privbayes structure: exponential mechanism x {d - 1} on mutual information",
                epsilon=eps1,
                mechanism="exponential",
                sensitivity=mi_sensitivity(n, binary=False),
            )
        network = self._learn_structure(cols, sizes, eps1, eps2, rng)
        materialised = covering_families(network)
        m = len(materialised)
        ledger.charge(
            f"privbayes conditionals: Laplace on {m} joint count tables (L1 sensitivity 2 each)",
            epsilon=eps2,
            mechanism="laplace",
            sensitivity=2.0,
        )
        joints: dict[tuple[int, ...], np.ndarray] = {}
        for family in materialised:
            shape = [sizes[v] for v in family]
            key = _encode([cols[v] for v in family], shape)
            counts = np.bincount(key, minlength=math.prod(shape)).reshape(shape)
            joints[family] = noisy_counts(counts, n_tables=m, epsilon=eps2, rng=rng)
        conditionals: list[np.ndarray] = []
        for x, parents in network:
            family = next(f for f in materialised if {x, *parents} <= set(f))
            joint = joints[family]
            keep = sorted({x, *parents})
            marg = joint.sum(axis=tuple(i for i, v in enumerate(family) if v not in keep))
            order = [keep.index(v) for v in (*parents, x)]
            table = marg.transpose(order).reshape(math.prod(sizes[p] for p in parents), sizes[x])
            conditionals.append(_normalise(table))
        seen: set[int] = set()
        for x, parents in network:  # acyclic: every parent comes earlier in the order
            assert set(parents) <= seen, (x, parents)
            seen.add(x)
        self.domain_ = domain
        self.network_ = network
        self.conditionals_ = conditionals
        return self

    @property
    def graph_(self) -> nx.DiGraph:
        """The fitted Bayesian network as a networkx DAG (column names as nodes)."""
        import networkx as nx  # noqa: PLC0415  (0.14 s to import; fit and sample skip it)

        names = self.domain_.names
        graph = nx.DiGraph()
        graph.add_nodes_from(names)
        graph.add_edges_from((names[p], names[x]) for x, ps in self.network_ for p in ps)
        return graph

    def sample(self, n: int, *, rng: np.random.Generator) -> pd.DataFrame:
        """Draw ``n`` rows in topological order (post-processing only).

        Systematic within each parent cell (see :attr:`systematic`), so a child's count
        given its parents' is within one of expected; every row keeps the model's law.
        """
        if not hasattr(self, "conditionals_"):
            raise RuntimeError("call fit() before sample()")
        if n < 0:
            raise ValueError(f"n ({n}) must be >= 0")
        sizes = list(self.domain_.sizes)
        out: dict[int, np.ndarray] = {}
        for (x, parents), table in zip(self.network_, self.conditionals_, strict=True):
            pidx = (
                _encode([out[p] for p in parents], [sizes[p] for p in parents])
                if parents
                else np.zeros(n, dtype=np.int64)
            )
            u, order = (
                systematic_draw(pidx, len(table), rng) if self.systematic else (rng.random(n), None)
            )
            out[x] = _inverse_cdf(table, pidx, u, order)
        return pd.DataFrame(
            {name: out[i].astype(np.int16) for i, name in enumerate(self.domain_.names)}
        )
