"""Notebook conveniences over the pipeline: a scikit-learn-like :class:`Synthesizer`.

``Synthesizer(spec, configuration).fit(data).sample()`` is one flow (SPEC sec. 1):
transform with the configuration's bins, fit its DP generator (the ledger is charged
the spec's generator budget inside ``fit``, before anything is released), then sample,
filter implausible rows and project so that every record appears at least
``min_count`` times (post-processing, free). Nothing prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.flow import draw_candidate, fit_generator
from synthflow.generators.protocol import Generator
from synthflow.jobs import open_job
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.release.cost import delta_of
from synthflow.space import Configuration, find_configuration
from synthflow.transform import Transformer

if TYPE_CHECKING:
    from synthflow.acceptance.evaluate import AcceptanceReport

__all__ = ["Synthesizer", "evaluate_candidate"]

VALUES = "synthflow_values"
"""The mark (``DataFrame.attrs``) of a candidate of values, with its configuration's id."""


class Synthesizer:
    """One configuration of a release spec, as ``fit`` / ``sample``.

    Args:
        spec: A :class:`~synthflow.config.ReleaseSpec`, a spec file, or the name of a
            bundled spec (``"births"``).
        configuration: A configuration id (``synthflow space``) or a
            :class:`~synthflow.space.Configuration`.

    >>> s = Synthesizer("births-2024", "privbayes-a1076afd5b")
    >>> s
    Synthesizer(spec='births-2024', configuration='privbayes-a1076afd5b', fitted=False)
    """

    def __init__(self, spec: ReleaseSpec | str | Path, configuration: str | Configuration):
        self.spec = spec if isinstance(spec, ReleaseSpec) else load_spec(spec)
        self.configuration = (
            configuration
            if isinstance(configuration, Configuration)
            else find_configuration(self.spec, configuration)
        )
        self.transformer = Transformer(self.spec, self.configuration.transformations)
        self.generator_: Generator | None = None
        self.n_: int | None = None
        self._rng: PrivacyRNG | None = None

    def __repr__(self) -> str:
        return (
            f"Synthesizer(spec={self.spec.name!r}, configuration={self.configuration.id!r}, "
            f"fitted={self.generator_ is not None})"
        )

    def get_params(self) -> dict[str, Any]:
        """The public settings (scikit-learn style): spec, configuration and budget."""
        return {
            "spec": self.spec.path,
            "configuration": self.configuration.id,
            "model": self.configuration.model,
            "hyperparameters": self.configuration.hyperparameters,
            "transformations": self.configuration.transformations,
            "min_count": self.configuration.min_count,
            "epsilon": self.spec.privacy.generator_epsilon,
        }

    def fit(
        self,
        data: pd.DataFrame | str | Path,
        *,
        ledger: Ledger | None = None,
        rng: PrivacyRNG | None = None,
        public: bool = False,
    ) -> Synthesizer:
        """Fit the DP generator; charges ``ledger`` the spec's generator budget.

        Args:
            data: The raw release columns (:func:`synthflow.load_data`), or a data
                file; either is cleaned and checked against the spec as the command line
                does (a value out of domain refused before any charge).
            ledger: The dataset's persistent ledger (:func:`synthflow.dataset_ledger`),
                required unless ``public``, as on the command line. With ``public=True``
                the default is a new in-memory ledger of the spec's total budget.
            rng: Randomness. Default: a CSPRNG (:meth:`PrivacyRNG.secure`); a seeded
                one (:meth:`PrivacyRNG.from_seed`) only with ``public=True``.
            public: Declares the data public (required for seeds and for generators
                that run on public data only).

        Raises:
            ConfigError: A seeded rng without ``public``, a public-only generator, or
                data not declared public without their dataset ledger.
            DataError: The data fail the data checks (never quoting a value).
            InfeasibleConfigurationError: Fewer rows than ``min_count`` (nothing spent).
            BudgetExceededError: The ledger cannot afford the generator budget.
        """
        job = open_job(
            self.spec,
            data,
            public=public,
            rng=rng,
            ledger=ledger,
            models=(self.configuration.model,),
            api=True,
        )
        frame, rng, ledger = job.frame, job.rng, job.ledger  # a frame cleaned as a file is
        assert frame is not None and ledger is not None
        codes = self.transformer.forward(frame)
        n = len(codes)
        # The whole generator budget held before its first charge (#45), as the CLI's run.
        with ledger.reserve(
            self.spec.privacy.generator_epsilon,
            delta_of(self.configuration),
            what=f"Synthesizer.fit {self.configuration.id}",
        ):
            generator = fit_generator(
                self.spec, self.configuration, self.transformer, codes, ledger=ledger, rng=rng
            )
        self.generator_, self.n_, self._rng = generator, n, rng
        self.ledger_ = ledger
        return self

    def fit_sample(
        self,
        data: pd.DataFrame | str | Path,
        n: int | None = None,
        *,
        values: bool = True,
        codes: bool = False,
        ledger: Ledger | None = None,
        rng: PrivacyRNG | None = None,
        public: bool = False,
    ) -> pd.DataFrame:
        """Fit, then draw one candidate: ``fit(data, ...)`` then ``sample(n, values=...)``.

        The candidate holds values, as the data do (an age bin ``35-39`` becomes a whole
        number drawn uniformly in it, from the fit's randomness); ``values=False`` gives
        the bin labels, as :meth:`sample` does by default, and ``codes=True`` the codes.

        The privacy rules are :meth:`fit`'s: data not declared public (``public=True``)
        need their dataset's persistent ledger (``ledger=``), and without either the
        call is refused before the data are read. The ledger is charged the generator
        budget once; sampling is post-processing. The fitted generator stays, so
        :meth:`sample` draws further candidates free.

        Example (not run here; ``data`` from :func:`synthflow.load_data`)::

            s = Synthesizer("births-2024", "privbayes-a1076afd5b")
            candidate = s.fit_sample("nvss_10k.csv", public=True)
            ledger = synthflow.dataset_ledger("budget.jsonl", data, total_epsilon=10)
            candidate = s.fit_sample(data, ledger=ledger)  # private data

        Args:
            data: As for :meth:`fit`.
            n: Rows of the candidate (default: as many as the data had).
            values: Values (the default) instead of bin labels.
            codes: Integer codes instead of values or bin labels.
            ledger: As for :meth:`fit`.
            rng: As for :meth:`fit`.
            public: As for :meth:`fit`.

        Raises:
            ConfigError, InfeasibleConfigurationError, BudgetExceededError: As :meth:`fit`.
        """
        fitted = self.fit(data, ledger=ledger, rng=rng, public=public)
        return fitted.sample(n, codes=codes, values=values)

    def sample(
        self, n: int | None = None, *, codes: bool = False, values: bool = False
    ) -> pd.DataFrame:
        """Draw a candidate: sample, filter, project (post-processing; nothing charged).

        Args:
            n: Rows (default: as many as the data had, the release's public n).
            codes: Return integer codes instead of bin labels.
            values: Return values instead of bin labels: a category as it is, an int bin
                as a whole number drawn uniformly among its values in the column's
                public domain, from the fit's randomness (a CSPRNG unless seeded).
                :func:`evaluate_candidate` takes the frame as it is returned.
        """
        if self.generator_ is None or self._rng is None or self.n_ is None:
            raise RuntimeError("call fit() before sample()")
        n = self.n_ if n is None else n
        candidate, _, _, _ = draw_candidate(
            self.generator_,
            n,
            spec=self.spec,
            configuration=self.configuration,
            transformer=self.transformer,
            rng=self._rng,
        )
        if codes:
            return candidate
        if not values:
            return self.transformer.to_labels(candidate)
        out = self.transformer.to_values(candidate, self._rng.generator())
        out.attrs[VALUES] = self.configuration.id  # evaluate_candidate bins them back
        return out


def evaluate_candidate(
    spec: ReleaseSpec | str | Path,
    configuration: str | Configuration,
    original: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    exact: bool,
    ledger: Ledger | None = None,
    rng: PrivacyRNG | None = None,
    public: bool = False,
) -> AcceptanceReport:
    """The acceptance criteria between the original and a candidate.

    Args:
        spec: The release spec (object, file or bundled name).
        configuration: The configuration the candidate was made with (id or object).
        original: The raw release columns (:func:`synthflow.load_data`), cleaned and
            checked as a data file is (a value out of domain refused, nothing charged).
        candidate: The candidate as :meth:`Synthesizer.sample` or
            :meth:`~Synthesizer.fit_sample` return it: bin labels, codes or values.
        exact: ``True``: exact values, nothing charged, for public data only (exact
            values of private data are not private). ``False``: the DP release of each
            criterion, charged to ``ledger`` with noise from ``rng``.
        ledger: The original's persistent ledger (:func:`synthflow.dataset_ledger`);
            with ``public=True`` any ledger (an in-memory one by default).
        rng: DP noise (default: a CSPRNG; a seeded one for public data only).
        public: Declares the original public (required for ``exact``).

    Returns:
        An :class:`~synthflow.AcceptanceReport` (a table in a notebook).

    Raises:
        DataError: The original fails the data checks (never quoting a value).
    """
    from synthflow.acceptance.evaluate import evaluate  # noqa: PLC0415

    spec = spec if isinstance(spec, ReleaseSpec) else load_spec(spec)
    cfg = (
        configuration
        if isinstance(configuration, Configuration)
        else find_configuration(spec, configuration)
    )
    transformer = Transformer(spec, cfg.transformations)
    if exact and not public:
        raise ConfigError(
            "exact=True gives exact, non-private statistics of the original: for public "
            "data only (public=True); evaluate private data with exact=False and its "
            "dataset ledger"
        )
    # The original cleaned as a file is (the command line's checks), before any charge.
    job = open_job(spec, original, public=public, rng=rng, charges=False, api=True)
    assert job.frame is not None
    orig = transformer.forward(job.frame)
    cand = _candidate_codes(candidate, transformer)
    if exact:
        return evaluate(spec, transformer, orig, cand, exact=True)
    if not public:  # the fit's noise weights and figures read it: never the private rows
        from synthflow.public_sample import check_public_sample_is_public  # noqa: PLC0415

        check_public_sample_is_public(spec, job.frame, [transformer])
    ledger = job.open_ledger(ledger)  # the dataset's (refused if none), once all is checked
    return evaluate(spec, transformer, orig, cand, exact=False, ledger=ledger, rng=job.rng)


def _candidate_codes(candidate: pd.DataFrame, transformer: Transformer) -> pd.DataFrame:
    """A candidate's codes: from values (marked by ``sample``), codes or bin labels."""
    from synthflow.errors import DataError  # noqa: PLC0415

    names = list(transformer.domain.names)
    if VALUES in candidate.attrs:  # values binned as the original is
        return transformer.forward(candidate[names])
    if all(pd.api.types.is_integer_dtype(candidate[c]) for c in names):
        outside = [
            c for c in names if not candidate[c].between(0, transformer.domain.size(c) - 1).all()
        ]
        if outside:
            raise DataError(
                f"the candidate's integer column(s) {outside} are not this configuration's "
                "codes; pass the candidate as Synthesizer.sample or fit_sample return it "
                "(bin labels, codes or values)"
            )
        return candidate[names]
    return transformer.from_labels(candidate.astype(str))
