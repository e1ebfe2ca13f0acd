"""The steward's release job: private selection over a shortlist, then publish.

``synthflow release`` (:mod:`synthflow.cli.release`) is argparse and printing over
:func:`run_release`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthflow._notices import say
from synthflow._outputs import check_output_dir, removed_if_refused
from synthflow._progress import private_count_line
from synthflow.candidates import read_candidates, read_pass_rates
from synthflow.config.model import DatasheetSpec
from synthflow.cost import selection_cost
from synthflow.criteria import release_once
from synthflow.errors import (
    ConfigError,
    SpentError,
)
from synthflow.flow import check_configurations
from synthflow.jobs._attempt import _attempt_fn
from synthflow.jobs._open import open_job
from synthflow.jobs._plan_size import plan_rows_problem
from synthflow.jobs._release_checks import (
    _check_dataset_budget,
    _check_plan_holds,
    _check_writable,
    _planned_options,
    _read_plan,
    _spent,
    _unconfirmed_provenance,
    selection_spend_line,
    why_hopeless,
)
from synthflow.ledger import Ledger, file_sha256, read_ledger
from synthflow.loader import load_datasheet, load_spec
from synthflow.public_sample import check_public_sample_is_public
from synthflow.release.preflight import (
    check_ledger_outside_enclave,
    check_not_screened_on,
    check_room_for_release,
)
from synthflow.release.publish import write_release
from synthflow.release.selection import private_selection
from synthflow.rng import PrivacyRNG
from synthflow.transform import Transformer

__all__ = ["run_release", "why_hopeless"]


def run_release(
    spec_path: str | Path,
    data: str | Path,
    candidates_path: str | Path,
    out: str | Path,
    private_dir: str | Path,
    *,
    stop_probability: float | None = None,
    fit_once: bool | None = None,
    seed: int | None = None,
    public: bool = False,
    show_progress: bool = True,
    max_attempts: int | None = None,
    show_attempts: bool = False,
    ledger_path: str | Path | None = None,
    plan_path: str | Path | None = None,
    force: bool = False,
    note: str | None = None,
    sign: str | Path | None = None,
    datasheet: str | Path | DatasheetSpec | None = None,
) -> Path | None:
    """Private selection, then the release package; returns RELEASE_DIR or None.

    ``plan_path``: the plan.json of ``synthflow plan`` that made the spec: its fit mode
    and stop probability are the defaults, and the package records its hash.
    ``stop_probability`` defaults to the plan's, else 0; ``fit_once`` to the plan's,
    else False. ``force``: go on although the pre-flight says no candidate can pass
    reliably (see :func:`why_hopeless`). ``note``: a prominent note for the
    datasheet's readers (the demo says its "private" data is a public stand-in).
    ``sign``: an Ed25519 private key file (``synthflow keygen``) that signs the package.
    ``datasheet``: the release's provenance (a file with the spec's ``datasheet`` keys,
    docs/datasheet-template.yaml), replacing the spec's. Without it, a bundled spec's
    provenance is published under a warning that it was not confirmed for these data
    (it describes the dataset the bundled spec was written for).
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
        _check_writable(option, path)  # before anything is charged
    if datasheet is not None and not isinstance(datasheet, DatasheetSpec):
        datasheet = load_datasheet(datasheet)  # read and checked before anything is charged
    signing_key = None
    if sign is not None:  # read and checked before anything is charged
        from synthflow.release.signing import load_private_key  # noqa: PLC0415

        signing_key = load_private_key(sign)
    spec = load_spec(spec_path)
    provenance = _unconfirmed_provenance(spec, datasheet)
    plan = _read_plan(plan_path, spec) if plan_path is not None else None
    fit_once, stop_probability = _planned_options(plan, fit_once, stop_probability)
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
        _check_plan_holds(
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
    _check_dataset_budget(  # before the enclave
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
    # The number of attempts is private: by default the line shows only for how long
    # selection runs, redrawn every second by its own clock (never as an attempt ends);
    # --show-attempts shows the count on the steward's terminal inside the enclave.
    line = private_count_line(
        "private selection", unit="attempt", show_count=show_attempts, disable=not show_progress
    )
    try:
        with removed_if_refused(private_dir), line as set_count:  # refused: no empty dir
            outcome = private_selection(
                spec,
                candidates,
                attempt=_attempt_fn(spec, raw, show_progress=False, public=public),
                enclave_dir=private_dir,
                enclave_ledger=Ledger(  # the selection's own; the dataset's is `shared`
                    total_epsilon=spec.privacy.total_epsilon,
                    total_delta=spec.privacy.total_delta,
                    path=private_dir / "ledger.jsonl",
                ),
                rng=rng,
                stop_probability=stop_probability,
                fit_once=fit_once,
                fit=fit,
                max_attempts=max_attempts,
                on_attempt=lambda k, _ok: set_count(k),  # the selection's attempt number
                dataset_ledger=shared,
                rows=len(raw),
            )
    except (KeyboardInterrupt, OSError) as exc:
        if not _spent(private_dir):
            raise
        # After the charge: exit 4, saying what was spent. The selection continues on a
        # re-run; an attempt that was cut short counts as a failed attempt (#45).
        why = (
            "interrupted"
            if isinstance(exc, KeyboardInterrupt)
            else f"{exc.strerror or exc} ({exc.filename or private_dir})"
        )
        raise SpentError(
            f"{why} during private selection; {selection_spend_line(private_dir, ledger_path)}. "
            "Re-run the same command to continue the same selection without a new charge (an "
            "attempt that was cut short counts as a failed attempt; free space or fix the "
            "path first). Whether and when a selection stops depends on the private data: "
            "nothing derived from it (not even that it stopped) may leave the enclave until "
            "it has been continued to its end"
        ) from None
    if outcome.configuration is None:
        return None
    # (candidate, report, extra); a selection saved by an older version has no extra.
    candidate, report, *rest = outcome.payload
    extra: dict[str, Any] = rest[0] if rest else {}
    try:
        return write_release(
            out,
            spec=spec,
            configuration=outcome.configuration,
            transformer=Transformer(spec, outcome.configuration.transformations),
            candidate=candidate,
            report=report,
            cost=outcome.cost,
            plan=(
                {
                    "plan_sha256": file_sha256(plan_path),
                    "planned_spec_sha256": plan["planned_spec_sha256"],
                    "total_epsilon": plan["total_epsilon"],
                    "predicted_release_probability": plan["release_probability"],
                    "stop_probability": plan.get(
                        "stop_probability", plan["options"]["stop_probability"]
                    ),
                }
                if plan is not None and plan_path is not None
                else None
            ),
            projection_rows=extra.get("projection_rows"),
            note=note,
            signing_key=signing_key,
            datasheet=datasheet,
            provenance_warning=provenance,
            dataset_spent=_dataset_spent(ledger_path),
        )
    except OSError as exc:
        raise SpentError(
            f"writing the release to {str(out)!r} failed ({exc.strerror or exc}) after epsilon "
            f"{_spent(private_dir):g} was charged; the selected candidate is saved in "
            f"{str(private_dir)!r}: free space or fix --out, then re-run the same command to "
            "publish it without spending again"
        ) from exc


def _dataset_spent(ledger_path: str | Path | None) -> tuple[float, float] | None:
    """The data's ledger's (epsilon, delta) spent so far, this selection included."""
    if ledger_path is None or not Path(ledger_path).exists():
        return None
    shared = read_ledger(ledger_path)
    return shared.spent_epsilon, shared.spent_delta
