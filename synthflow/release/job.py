"""The steward's release job: its pre-flight, private selection over a shortlist, then publish.

``synthflow release`` (:mod:`synthflow.cli.release`) is argparse and printing over
:func:`run_release` (the job layer exports the same function). It runs three steps,
each a function returning a frozen result:
:func:`~synthflow.release.preflight.preflight` (every check before the one charge; a
:class:`~synthflow.release.preflight.Preflight`), :func:`select` (the charge and the
selection in the enclave; a :class:`~synthflow.release.selection.SelectionOutcome`) and
:func:`publish` (the package; :class:`Published`). Like every job it opens its data and
randomness with ``open_job`` (:mod:`synthflow._job_open`, below the job layer), and it
opens the selection's own ledger in the enclave; it imports nothing of the job layer
(``jobs/``), the layer above it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthflow._util.outputs import removed_if_refused
from synthflow._util.progress import private_count_line
from synthflow.config.model import DatasheetSpec
from synthflow.errors import SpentError
from synthflow.privacy.ledger import Ledger, file_sha256
from synthflow.release.preflight import Preflight, preflight
from synthflow.release.publish import write_release
from synthflow.release.selection import SelectionOutcome, private_selection
from synthflow.release.spend import dataset_spent, selection_spend_line, selection_spent
from synthflow.transform import Transformer

__all__ = ["Published", "publish", "run_release", "select"]


@dataclass(frozen=True)
class Published:
    """The release package, written."""

    release_dir: Path
    """RELEASE_DIR: the package's directory (--out)."""


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
    reliably (see :func:`~synthflow.release.hopeless.why_hopeless`). ``note``: a
    prominent note for the datasheet's readers (the demo says its "private" data is a
    public stand-in).
    ``sign``: an Ed25519 private key file (``synthflow keygen``) that signs the package.
    ``datasheet``: the release's provenance (a file with the spec's ``datasheet`` keys,
    docs/datasheet-template.yaml), replacing the spec's. Without it, a bundled spec's
    provenance is published under a warning that it was not confirmed for these data
    (it describes the dataset the bundled spec was written for).
    """
    pre = preflight(
        spec_path,
        data,
        candidates_path,
        out,
        private_dir,
        stop_probability=stop_probability,
        fit_once=fit_once,
        seed=seed,
        public=public,
        max_attempts=max_attempts,
        ledger_path=ledger_path,
        plan_path=plan_path,
        force=force,
        sign=sign,
        datasheet=datasheet,
    )
    outcome = select(
        pre,
        Path(private_dir),
        public=public,
        max_attempts=max_attempts,
        show_progress=show_progress,
        show_attempts=show_attempts,
        ledger_path=ledger_path,
    )
    if outcome.configuration is None:
        return None
    return publish(
        pre,
        outcome,
        Path(out),
        Path(private_dir),
        plan_path=plan_path,
        ledger_path=ledger_path,
        note=note,
    ).release_dir


def select(
    pre: Preflight,
    private_dir: Path,
    *,
    public: bool,
    max_attempts: int | None,
    show_progress: bool,
    show_attempts: bool,
    ledger_path: str | Path | None,
) -> SelectionOutcome:
    """The charge and private selection in the enclave ``private_dir`` (continued if started).

    Raises:
        SpentError: Interrupted, or a file error, after the charge (exit 4): says what was
            spent and that a re-run continues the same selection.
    """
    spec, raw = pre.spec, pre.raw
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
                pre.candidates,
                data=raw,  # the release's own attempts run on the cleaned data
                public=public,
                enclave_dir=private_dir,
                enclave_ledger=Ledger(  # the selection's own; the dataset's is opened
                    total_epsilon=spec.privacy.total_epsilon,
                    total_delta=spec.privacy.total_delta,
                    path=private_dir / "ledger.jsonl",
                ),
                rng=pre.rng,
                stop_probability=pre.stop_probability,
                fit_once=pre.fit_once,
                fit=pre.fit,
                max_attempts=max_attempts,
                on_attempt=lambda k, _ok: set_count(k),  # the selection's attempt number
                dataset_ledger=pre.dataset_ledger,
                rows=len(raw),
            )
    except (KeyboardInterrupt, OSError) as exc:
        if not selection_spent(private_dir):
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
    return outcome


def publish(
    pre: Preflight,
    outcome: SelectionOutcome,
    out: Path,
    private_dir: Path,
    *,
    plan_path: str | Path | None,
    ledger_path: str | Path | None,
    note: str | None,
) -> Published:
    """The release package of the selected candidate, written into ``out``.

    Raises:
        SpentError: If writing it fails (after the charge): the selected candidate stays
            saved in the enclave and a re-run publishes it without spending again.
    """
    configuration = outcome.configuration
    if configuration is None:
        raise ValueError("nothing was selected: a selection that stopped publishes nothing")
    plan = pre.plan
    # (candidate, report, extra); a selection saved by an older version has no extra.
    candidate, report, *rest = outcome.payload
    extra: dict[str, Any] = rest[0] if rest else {}
    try:
        release_dir = write_release(
            out,
            spec=pre.spec,
            configuration=configuration,
            transformer=Transformer(pre.spec, configuration.transformations),
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
            signing_key=pre.signing_key,
            datasheet=pre.datasheet,
            provenance_warning=pre.provenance_warning,
            dataset_spent=dataset_spent(ledger_path),
        )
    except OSError as exc:
        raise SpentError(
            f"writing the release to {str(out)!r} failed ({exc.strerror or exc}) after epsilon "
            f"{selection_spent(private_dir):g} was charged; the selected candidate is saved in "
            f"{str(private_dir)!r}: free space or fix --out, then re-run the same command to "
            "publish it without spending again"
        ) from exc
    return Published(release_dir=release_dir)
