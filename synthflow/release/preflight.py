"""The release's pre-flight: every check before its one charge, in the order they run.

A release charges the dataset's ledger once, then selects, saves and publishes: a
refusal after the charge loses the budget. :func:`preflight` reads and checks all that
can be checked up front and opens what the selection charges; it returns a
:class:`Preflight` and has charged nothing. Its checks: the files a release reads and
writes (:mod:`~synthflow.release.file_checks`), the plan
(:mod:`~synthflow.release.plan_checks`), a hopeless selection
(:mod:`~synthflow.release.hopeless`) and the dataset's budget
(:mod:`~synthflow.release.spend`). The release job (:mod:`synthflow.release.job`) runs
it, then the selection, then the publication.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthflow._job_open import open_job
from synthflow._util.notices import say
from synthflow._util.outputs import check_output_dir
from synthflow.candidates import read_candidates, read_pass_rates
from synthflow.config.model import DatasheetSpec, ReleaseSpec
from synthflow.criteria import release_once
from synthflow.errors import (
    ConfigError,
)
from synthflow.flow import check_configurations
from synthflow.loader import load_datasheet, load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.public_sample import check_public_sample_is_public
from synthflow.release._provenance import bundled_provenance_of, provenance_warning
from synthflow.release.cost import SelectionCost, selection_cost
from synthflow.release.file_checks import (
    check_ledger_outside_enclave,
    check_not_screened_on,
    check_room_for_release,
    check_writable_output,
)
from synthflow.release.hopeless import why_hopeless
from synthflow.release.plan_checks import (
    check_plan_holds,
    plan_rows_problem,
    planned_options,
    read_plan,
)
from synthflow.release.spend import check_dataset_budget
from synthflow.space import Configuration
from synthflow.transform import Transformer

__all__ = ["Preflight", "preflight"]


@dataclass(frozen=True, kw_only=True)
class Preflight:
    """What the selection and the publication start from, every check passed (no charge)."""

    spec: ReleaseSpec
    candidates: list[Configuration]
    raw: Any
    """The cleaned data (the enclave's: never published)."""
    rng: PrivacyRNG
    """The selection's randomness (a CSPRNG, or a seed on public data)."""
    cost: SelectionCost
    fit_once: bool
    stop_probability: float
    fit: Callable[[Ledger, PrivacyRNG], Any] | None
    """Computes the once-per-release fit (``fit_once``), charging the ledger it is given."""
    dataset_ledger: Ledger | None
    """The dataset's ledger, opened (None: public data without --ledger)."""
    plan: dict[str, Any] | None
    """The plan.json the release was planned with (checked to hold), or None."""
    datasheet: DatasheetSpec | None
    signing_key: Any
    provenance_warning: str | None
    """The datasheet's warning that a bundled spec's provenance was not confirmed."""


def preflight(
    spec_path: str | Path,
    data: str | Path,
    candidates_path: str | Path,
    out: str | Path,
    private_dir: str | Path,
    *,
    stop_probability: float | None,
    fit_once: bool | None,
    seed: int | None,
    public: bool,
    max_attempts: int | None,
    ledger_path: str | Path | None,
    plan_path: str | Path | None,
    force: bool,
    sign: str | Path | None,
    datasheet: str | Path | DatasheetSpec | None,
) -> Preflight:
    """Every check before the release's charge; the job opened, nothing charged.

    The arguments are :func:`~synthflow.release.job.run_release`'s. Reads the spec, the
    candidates, the plan, the datasheet and the signing key, opens the job
    (:func:`~synthflow._job_open.open_job`: its randomness and the cleaned data) and then
    the dataset's ledger, and says what the charge will be for a single attempt.

    Raises:
        ConfigError: For the first check that fails (nothing was spent).
    """
    # Long: every pre-flight check before the one charge, in the order they must run.
    if max_attempts is not None and max_attempts < 1:
        raise ConfigError(f"--max-attempts must be at least 1, not {max_attempts}")
    candidates_path, out, private_dir = Path(candidates_path), Path(out), Path(private_dir)
    enc, pub = private_dir.resolve(), out.resolve()
    if enc == pub or pub in enc.parents or enc in pub.parents:
        raise ConfigError(
            "--private-dir and --out must be separate directories, neither inside the other: "
            "enclave files (ledger, transcript) are never published"
        )
    if ledger_path is not None and pub in Path(ledger_path).resolve().parents:
        raise ConfigError(
            "--ledger must not be inside --out: the dataset's ledger never leaves the enclave "
            "(keep it beside --private-dir)"
        )
    if ledger_path is not None:  # the enclave's own files are never the dataset's ledger
        check_ledger_outside_enclave(Path(ledger_path), enc)
    for option, path in (("--out", out), ("--private-dir", private_dir)):
        check_writable_output(option, path)  # before anything is charged
    if datasheet is not None and not isinstance(datasheet, DatasheetSpec):
        datasheet = load_datasheet(datasheet)  # read and checked before anything is charged
    signing_key = None
    if sign is not None:  # read and checked before anything is charged
        from synthflow.release.signing import load_private_key  # noqa: PLC0415

        signing_key = load_private_key(sign)
    spec = load_spec(spec_path)
    provenance = _unconfirmed_provenance(spec, datasheet)
    plan = read_plan(plan_path, spec) if plan_path is not None else None
    fit_once, stop_probability = planned_options(plan, fit_once, stop_probability)
    fit_once = bool(fit_once)
    stop_probability = 0.0 if stop_probability is None else stop_probability
    candidates = read_candidates(spec, candidates_path)
    if not public and isinstance(data, (str, Path)):  # a shortlist or plan of these rows
        check_not_screened_on(Path(data), candidates_path, plan)
    check_output_dir(out, option="--out")  # the one output-directory rule
    job = open_job(
        spec,
        data,
        public=public,
        seed=seed,
        models=tuple(c.model for c in candidates),
        charges=False,  # the dataset ledger is opened below, once every check has passed
    )
    rng, raw = job.rng, job.frame
    assert raw is not None
    check_configurations(spec, candidates, len(raw))  # before anything is charged
    check_room_for_release(spec, candidates, len(raw))  # a file-size limit (ulimit -f)
    if not public:  # as read and as each candidate's binning reads it
        binnings = {tuple(sorted(c.transformations.items())) for c in candidates}
        check_public_sample_is_public(
            spec, raw, [Transformer(spec, dict(b)) for b in sorted(binnings)]
        )
    # The selection's accounting (its theorem, gamma, delta) is checked before the
    # progress display starts; private_selection checks it again before charging.
    cost = selection_cost(
        spec,
        fit_once=fit_once,
        candidates=candidates,
        rows=len(raw),
        stop_probability=stop_probability,
    )
    if plan is not None:
        check_plan_holds(
            plan,
            cost.total,
            [c.id for c in candidates],
            delta=cost.total_delta,
            theorem=cost.theorem,
        )
    # A selection that has started (its ledger exists) was judged when it started;
    # resuming it must not be refused (its budget is already spent).
    resuming = (private_dir / "ledger.jsonl").exists()
    hopeless = (
        ""
        if resuming
        else why_hopeless(
            spec, candidates, len(raw), read_pass_rates(candidates_path), fit_once=fit_once
        )
    )
    sized, refuse = plan_rows_problem(plan, len(raw)) if not resuming else ("", False)
    if refuse and not hopeless:
        hopeless = sized
    elif sized and (force or not hopeless):  # a plan of this size cannot help a hopeless one
        say(f"synthflow release: warning: {sized}")
    if hopeless and not force:
        raise ConfigError(
            f"{hopeless}\nNothing was spent. Change the spec (or the shortlist), or add "
            "--force to spend the budget anyway"
        )
    if hopeless:
        say(f"synthflow release: warning (--force given): {hopeless}")
    shared = job.open_ledger(ledger_path) if ledger_path is not None or not public else None
    check_dataset_budget(  # before the enclave
        shared, cost, ledger_path, resuming=resuming, private_dir=private_dir
    )
    fit = None
    if fit_once:
        letters = {tuple(sorted(c.transformations.items())) for c in candidates}
        if len(letters) != 1:
            raise ConfigError(
                "--fit-once needs all candidates to share their transformations (the fit is "
                "made on D_T once); shortlist one transformation set or drop --fit-once"
            )
        tr = Transformer(spec, candidates[0].transformations)
        original = tr.forward(raw)

        def fit(ledger: Ledger, r: PrivacyRNG) -> Any:
            return release_once(spec, tr, original, ledger=ledger, rng=r)

    affordable = cost.total <= spec.privacy.total_epsilon * (1 + 1e-12)  # else refused below
    if stop_probability >= 1 and not resuming and affordable:  # said before the charge,
        # after every refusal (the dataset ledger's among them): never before one
        say(
            f"synthflow release: a single attempt: epsilon {cost.total:.6g} (delta "
            f"{cost.total_delta:.3g}) is charged now; if the attempt fails, nothing is "
            "released and the budget stays spent"
        )
    return Preflight(
        spec=spec,
        candidates=candidates,
        raw=raw,
        rng=rng,
        cost=cost,
        fit_once=fit_once,
        stop_probability=stop_probability,
        fit=fit,
        dataset_ledger=shared,
        plan=plan,
        datasheet=datasheet,
        signing_key=signing_key,
        provenance_warning=provenance,
    )


def _unconfirmed_provenance(spec: Any, datasheet: Any) -> str | None:
    """The datasheet's warning when its provenance is a bundled spec's (said on stderr too)."""
    bundled = bundled_provenance_of(spec) if datasheet is None else None
    if bundled is None:
        return None
    warning = provenance_warning(bundled, spec.datasheet)
    say(f"synthflow release: warning: {warning}")
    return warning
