"""Private selection with a known threshold (Liu & Talwar, STOC 2019; SPEC sec. 8).

Loop: draw a candidate configuration uniformly with a CSPRNG, run one flow and its DP
evaluation, stop at the first pass; after a failure stop empty-handed with probability
``stop_probability`` (gamma). If one attempt is epsilon-DP, the output is 2 epsilon-DP
for any gamma in [0, 1) and any number of attempts, so the ledger is charged once, up
front, and the charge does not depend on how many attempts run.

With ``stop_probability`` 1 the loop is **a single attempt**: one configuration, one
flow and its evaluation, released if it passes and nothing otherwise. The outcome is a
post-processing of that attempt's DP outputs, so it costs one attempt by basic
composition (:mod:`synthflow.release.cost`), not two; a failure ends the selection
(resuming never tries again).

When a candidate is (epsilon, delta)-DP (DP-SGD GANs, MST, AIM), Liu-Talwar's pure
bound does not apply and the same loop is accounted by **Papernot and Steinke**
("Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022, Theorem 2). The
loop is their "repeat K times and output the best" with K geometric (stop with
probability gamma after each attempt; mean 1/gamma): stopping at the first pass outputs
what the best of K would (a pass, ties broken by an independent random key, and the
attempts are i.i.d.), and stopping empty-handed is the best of K being a failure. One
attempt (a uniformly drawn candidate, then the evaluation) has a Renyi curve at most the
largest candidate's curve (Renyi divergence is jointly quasi-convex) plus the
evaluation's; the theorem turns it into the selection's curve, which is converted to
epsilon at the spec's ``privacy.total_delta`` and charged once, before the first
attempt. gamma must be > 0 here (the bound needs a finite mean number of attempts).

The selection lives in an enclave directory: its ledger, the fit released once (when it is
computed once per release), and a transcript of every configuration draw and released
value. A crash loses nothing that was paid for and redoes nothing: re-running continues
the same selection (the same ledger, the same fit, the attempt counter) and never
charges again. **A crash is an attempt**: an attempt that drew its configuration and then
raised, or whose process stopped (kill -9, a full disk, an interrupt) before its record
was written, counts as a failed attempt, and its stop coin is flipped as for any failure.
It is never redone with fresh noise (that would be "retry until pass" whenever a crash
follows a failure more often than a pass). A passing attempt whose result cannot be saved
is a failure too; one whose result was saved is handed back by the re-run.

Kept whole: the selection loop and its resume rules are one state machine (its storage
and its cost are in enclave.py and cost.py).
"""

from __future__ import annotations

import json
import logging
import pickle
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthflow._util.files import write_atomic
from synthflow.config.model import ReleaseSpec
from synthflow.errors import (
    BudgetExceededError,
    ConfigError,
    SelectionEnded,
    SelectionPaused,
)
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.release.attempt import Attempt, AttemptResult, flow_attempt
from synthflow.release.cost import (
    SELECTION_CHARGE,
    SELECTION_CHARGE_ONE,
    SELECTION_CHARGE_PS,
    SELECTION_REF,
    SelectionCost,
    selection_cost,
)
from synthflow.release.enclave import Enclave, read_outcome
from synthflow.release.shortfall import shortfall
from synthflow.space import Configuration

__all__ = [
    "Attempt",
    "AttemptResult",
    "SelectionCost",
    "SelectionOutcome",
    "private_selection",
    "selection_cost",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class SelectionOutcome:
    """Result of a selection: a passing attempt, or nothing (stopped by the coin)."""

    configuration: Configuration | None
    payload: Any
    attempts: int
    """Number of attempts (enclave only: never published)."""
    cost: SelectionCost


def private_selection(
    spec: ReleaseSpec,
    candidates: Sequence[Configuration],
    *,
    enclave_dir: Path,
    enclave_ledger: Ledger,
    rng: PrivacyRNG,
    attempt: Attempt | None = None,
    data: Any = None,
    public: bool = False,
    stop_probability: float = 0.0,
    fit_once: bool = False,
    fit: Callable[[Ledger, PrivacyRNG], Any] | None = None,
    max_attempts: int | None = None,
    on_attempt: Callable[[int, bool], None] | None = None,
    dataset_ledger: Ledger | None = None,
    rows: int | None = None,
) -> SelectionOutcome:
    """Run (or continue) private selection over ``candidates``.

    Args:
        spec: The release spec (budgets).
        candidates: The candidate configurations (pre-screened on public data).
        enclave_dir: Private directory for the ledger, fit and transcript.
        enclave_ledger: The selection's own ledger, ``enclave_dir / "ledger.jsonl"``
            with the spec's totals, opened by the release job (read again once the
            enclave is locked); each attempt's ledger is its child.
        rng: Privacy-critical randomness (secure in a release).
        attempt: Runs one flow and its DP evaluation for a configuration, charging the
            per-attempt ledger it is given; gets what was released once (or None).
            None: the release's own, :func:`~synthflow.release.attempt.flow_attempt`
            on ``data``.
        data: The cleaned data the release's own attempts run on (``attempt`` None).
        public: Whether ``data`` are declared public.
        stop_probability: gamma in [0, 1]: chance to stop empty-handed after a failure
            (1: a single attempt, charged once).
        fit_once: Release the once-per-release statistic (births: the regression fit)
            once before the loop (needs ``fit``).
        fit: Computes that fit, charging the ledger it is given.
        max_attempts: Pause (raise) after this many attempts in total; re-running
            continues the same selection. None: unbounded, as in Liu-Talwar.
        on_attempt: Progress callback (attempt number, passed).
        dataset_ledger: The private dataset's persistent ledger (``--ledger``): the
            selection's total is charged there too, once, when the selection starts.
        rows: The (public) number of rows; needed when a candidate is (epsilon, delta)-DP
            (its DP-SGD curve depends on the sampling rate).

    Raises:
        ConfigError: For an empty candidate set or gamma outside [0, 1]; with an
            (epsilon, delta) candidate, for gamma 0 or a spec without total_delta.
        BudgetExceededError: If the selection costs more than the spec's total budget.
        SelectionPaused: When ``max_attempts`` is reached (the selection can be continued).
    """
    # Long: the selection's cost and its refusals, checked before the enclave opens.
    if not candidates:
        raise ConfigError("no candidate configurations: the shortlist is empty")
    if not 0 <= stop_probability <= 1:
        raise ConfigError(f"--stop-probability ({stop_probability}) must be in [0, 1]")
    cost = selection_cost(
        spec,
        fit_once=fit_once,
        candidates=candidates,
        rows=rows,
        stop_probability=stop_probability,
    )
    short = shortfall(
        cost,
        epsilon=spec.privacy.total_epsilon,
        delta=spec.privacy.total_delta,
        where="the spec's total",
    )
    if short:
        advice = (
            "raise --stop-probability (fewer attempts on average), lower the budgets, or "
            "shortlist pure-DP candidates only (Liu-Talwar: twice one attempt)"
            if cost.papernot_steinke
            else "lower the budgets (or the Gaussian parts' delta) or release the fit "
            "once per release"
        )
        raise BudgetExceededError(f"private selection costs {short}; {advice}")
    if attempt is None:
        if data is None:
            raise ValueError("private_selection needs an attempt or the data to run one on")
        attempt = flow_attempt(spec, data, show_progress=False, public=public)
    enclave = Enclave(enclave_dir)
    lock = enclave.lock()
    try:
        return _select(
            spec,
            candidates,
            enclave=enclave,
            cost=cost,
            attempt=attempt,
            rng=rng,
            stop_probability=stop_probability,
            fit_once=fit_once,
            fit=fit,
            max_attempts=max_attempts,
            on_attempt=on_attempt,
            dataset_ledger=dataset_ledger,
            enclave_ledger=enclave_ledger,
        )
    finally:
        lock.close()  # releases the lock


def _select(
    spec: ReleaseSpec,
    candidates: Sequence[Configuration],
    *,
    enclave: Enclave,
    cost: SelectionCost,
    attempt: Attempt,
    rng: PrivacyRNG,
    stop_probability: float,
    fit_once: bool,
    fit: Callable[[Ledger, PrivacyRNG], Any] | None,
    max_attempts: int | None,
    on_attempt: Callable[[int, bool], None] | None,
    dataset_ledger: Ledger | None,
    enclave_ledger: Ledger,
) -> SelectionOutcome:
    # Long: the selection loop as one transcript: start, resume, charge, attempts, end.
    enclave_dir = enclave.root
    # The mechanism is fixed when selection starts: the spec (budgets, thresholds), the
    # candidate set, gamma and the fit-once choice. Resuming with any of them changed
    # would let a steward adapt after seeing failures under the single charge.
    fixed = {
        "spec_sha256": spec.sha256,
        "candidates": [c.id for c in candidates],
        "stop_probability": stop_probability,
        "fit_once": fit_once,
        "cost": cost.to_json(),
    }
    events = enclave.events()
    start = [e for e in events if e.get("event") == "start"]
    ledger = enclave_ledger
    if ledger.path is None or ledger.path.resolve() != (enclave_dir / "ledger.jsonl").resolve():
        raise ValueError("the selection's ledger is the enclave's ledger.jsonl")  # a caller's bug
    ledger.refresh()  # read again under the enclave's lock (opened before it was taken)
    charged = [c for c in ledger.charges if (c.ref or "").startswith(SELECTION_REF)]
    if start:
        changed = [k for k, v in fixed.items() if start[0].get(k) != v]
        if changed:
            raise ConfigError(
                f"the selection in {str(enclave_dir)!r} was started with another "
                f"{', '.join(changed)}; a selection must continue with exactly the spec, "
                "candidates, --stop-probability and --fit-once it started with (re-run the "
                "original command), or start a new release in a new --private-dir (which "
                "spends a new budget)"
            )
        ref = f"{SELECTION_REF}{start[0].get('selection_id')}"
        _check_resume(enclave_dir, ref, charged, dataset_ledger)
        if start[0].get("enclave") != str(enclave_dir.resolve()):
            raise ConfigError(
                f"the selection in {str(enclave_dir)!r} was started in "
                f"{start[0].get('enclave')!r}: a selection continues only in the directory it "
                "started in (a copy would run it twice on one charge); move it back and "
                "re-run there"
            )
    elif charged:
        raise ConfigError(
            f"the ledger in {str(enclave_dir)!r} records a selection charge but its transcript "
            "has no start record, so the selection's spec and candidates cannot be checked; "
            "the enclave is damaged: restore transcript.jsonl from a backup"
        )
    else:
        # A new selection: a random id binds its charge in the dataset ledger to this
        # enclave's start record. An emptied enclave has no start record, so running
        # the same command again is a new selection and is charged again.
        ref = f"{SELECTION_REF}{secrets.token_hex(16)}"
        enclave.log(
            {
                "event": "start",
                "selection_id": ref[len(SELECTION_REF) :],
                "enclave": str(enclave_dir.resolve()),
                **fixed,
            }
        )
    by_id = {c.id: c for c in candidates}
    ended = _ended(enclave, events, by_id, cost)
    if ended is not None:
        return ended
    label = (
        SELECTION_CHARGE_PS
        if cost.papernot_steinke
        else SELECTION_CHARGE_ONE
        if cost.single_attempt
        else SELECTION_CHARGE
    )
    if not charged:
        if not ledger.can_afford(cost.total, cost.total_delta):
            # raises: nothing charged
            ledger.charge(label, epsilon=cost.total, delta=cost.total_delta)
        if dataset_ledger is not None:
            dataset_ledger.charge(
                f"{label}: release with enclave {enclave_dir.resolve()}",
                epsilon=cost.total,
                delta=cost.total_delta,
                mechanism=cost.theorem,
                ref=ref,
            )
        ledger.charge(
            (
                f"{label}: geometric attempts (mean {1 / cost.stop_probability:g}) over "
                f"{len(candidates)} candidates, Renyi order {cost.renyi_order:g}"
                + (", once-per-release fit included" if cost.fit_once else "")
                if cost.papernot_steinke
                else f"{label}: 1 x {cost.attempt_epsilon:g}, one of {len(candidates)} candidates"
                if cost.single_attempt and cost.joint_epsilon is None and not cost.exact_epsilon
                else f"{label}, every part composed by its privacy loss distribution (epsilon "
                f"{cost.exact_epsilon:.6g} at delta {cost.total_delta:g}): one of "
                f"{len(candidates)} candidates"
                if cost.exact_epsilon
                else f"{label}, the generator and the Gaussian fit composed in zCDP (rho "
                f"{cost.joint_rho:.6g}, epsilon {cost.joint_epsilon:.6g}): one of "
                f"{len(candidates)} candidates"
                if cost.single_attempt
                else f"{label}: 2 x {cost.attempt_epsilon:g} over {len(candidates)} candidates"
            ),
            epsilon=cost.selection_epsilon,
            delta=cost.selection_charge_delta,
            mechanism=cost.theorem,
            ref=ref,
        )
    shared = None
    if fit_once:
        if fit is None:
            raise ConfigError("fit_once needs a fit function")
        shared = _fit_once(enclave, fit, ledger, rng, cost)
        if isinstance(shared, SelectionOutcome):
            return shared
    events = enclave.events()
    done = {e["attempt"]: e for e in events if e.get("event") == "attempt"}
    coins = {e["attempt"] for e in events if e.get("event") == "coin"}
    number = len(done)
    crashed = [e for e in events if e.get("event") == "draw" and e["attempt"] not in done]
    if crashed:
        # An attempt that drew and then stopped (a crash, kill -9, a full disk, an
        # interrupt) before its record: it counts as a failed attempt. Redoing it with
        # fresh noise would be "retry until pass" whenever crashes follow failures more
        # often than passes (docs/privacy.md, "What a crash costs").
        number = crashed[0]["attempt"]
        enclave.log(
            {
                "event": "attempt",
                "attempt": number,
                "config_id": crashed[0]["config_id"],
                "passed": False,
                "crashed": True,
            }
        )
    if number and stop_probability > 0 and number not in coins:
        # Stopped between a failed attempt and its stop coin: flip it now, so that the
        # number of attempts stays geometric (both theorems assume it).
        stopped = _flip_coin(
            enclave, rng, number=number, stop_probability=stop_probability, cost=cost
        )
        if stopped is not None:
            return stopped
    while True:
        if max_attempts is not None and number >= max_attempts:
            # The count equals the limit the steward set; it is not repeated here because
            # the number of attempts is private and messages may be copied out.
            raise SelectionPaused(
                "paused at the --max-attempts limit; re-run the same command with a larger "
                "--max-attempts (or without it) to continue the same selection. Whether and "
                "when a selection pauses depends on the private data: nothing derived from "
                "it (not even that it paused) may leave the enclave until it has been "
                "continued to its end"
            )
        number += 1
        unsaved: OSError | None = None
        cfg = candidates[rng.uniform_index(len(candidates))]
        enclave.log({"event": "draw", "attempt": number, "config_id": cfg.id})
        inner = ledger.child(
            total_epsilon=cost.attempt_epsilon,
            total_delta=cost.attempt_delta,
            path=enclave_dir / "attempts" / f"{number:05d}" / "ledger.jsonl",
        )
        result = _run_attempt(attempt, cfg, inner, rng, shared)
        record = {
            "event": "attempt",
            "attempt": number,
            "config_id": cfg.id,
            "passed": result.passed,
            **result.transcript,
        }
        if result.passed:
            # The result is saved first, then a short record that it passed, then the
            # transcript's full record, all before anything is published: a re-run hands
            # back the saved result and never draws again in its place. A result that
            # cannot be saved (disk full, a file-size limit) ends the attempt as a failure.
            try:
                write_atomic(
                    enclave.selected,
                    pickle.dumps(
                        {
                            "format": 2,
                            "attempt": number,
                            "config_id": cfg.id,
                            "payload": result.payload,
                            "record": record,
                        }
                    ),
                )
            except OSError as exc:
                _warn_crashed(f"saving its result failed ({exc.strerror or type(exc).__name__})")
                result = AttemptResult(passed=False, transcript={"crashed": "unsaved"})
                record = {**record, "passed": False, "crashed": "unsaved"}
                unsaved = exc
            else:
                enclave.log({"event": "passed", "attempt": number, "config_id": cfg.id})
        enclave.log(record)
        if on_attempt:
            on_attempt(number, result.passed)
        if result.passed:
            write_atomic(
                enclave.outcome, json.dumps({"selected": cfg.id, "attempts": number}).encode()
            )
            return SelectionOutcome(
                configuration=cfg, payload=result.payload, attempts=number, cost=cost
            )
        if stop_probability > 0:
            stopped = _flip_coin(
                enclave, rng, number=number, stop_probability=stop_probability, cost=cost
            )
            if stopped is not None:
                return stopped
        if unsaved is not None:
            # Counted as a failure, its coin flipped: stop here, so that the steward frees
            # space (or raises the limit) before the next attempt, instead of a loop of
            # passes that cannot be kept.
            raise unsaved


def _run_attempt(
    attempt: Attempt, cfg: Configuration, ledger: Ledger, rng: PrivacyRNG, fit: Any
) -> AttemptResult:
    """One attempt; any exception it raises is part of it, and so a failure.

    (A crash that kills the process is counted the same way when the selection resumes.)
    The exception's type is kept in the enclave's transcript, never its message.
    """
    try:
        return attempt(cfg, ledger, rng, fit)
    except Exception as exc:
        _warn_crashed(f"it raised {type(exc).__name__}")
        return AttemptResult(passed=False, transcript={"crashed": type(exc).__name__})


def _fit_once(
    enclave: Enclave,
    fit: Callable[[Ledger, PrivacyRNG], Any],
    ledger: Ledger,
    rng: PrivacyRNG,
    cost: SelectionCost,
) -> Any:
    """The statistic released once per release (the fit); a SelectionOutcome if it crashed.

    A structured record is written before the fit charges: a fit that may have been
    computed is never computed again. One that crashed (an exception, or a process that
    stopped before its file was saved) ends the selection without a release: recomputing
    it with fresh noise would be a second fit on one charge.
    """
    if enclave.fit_path.exists():
        return pickle.loads(enclave.fit_path.read_bytes())
    events = enclave.events()
    if any(e.get("event") == "draw" for e in events):
        # Attempts ran on the saved fit: its file was lost or deleted since.
        raise ConfigError(
            f"the enclave {str(enclave.root)!r} records the once-per-release fit but its "
            "file is missing; the fit cannot be recomputed without spending again: restore "
            f"{enclave.fit_path.name} from a backup"
        )
    if any(e.get("event") == "fit" for e in events):  # the fit itself was cut short
        return _end_without_release(enclave, cost, why="fit")
    enclave.log({"event": "fit"})
    try:
        value = fit(ledger, rng)
        write_atomic(enclave.fit_path, pickle.dumps(value))
    except Exception as exc:
        _warn_crashed(f"the once-per-release fit raised {type(exc).__name__}")
        return _end_without_release(enclave, cost, why="fit")
    return value


def _end_without_release(enclave: Enclave, cost: SelectionCost, *, why: str) -> SelectionOutcome:
    enclave.log({"event": "stopped", "attempt": 0, "crashed": why})
    write_atomic(enclave.outcome, json.dumps({"selected": None, "attempts": 0}).encode())
    return SelectionOutcome(configuration=None, payload=None, attempts=0, cost=cost)


def _warn_crashed(what: str) -> None:
    # INFO, not WARNING: whether an attempt crashed depends on the private data (as its
    # count does); -v shows it on the steward's terminal, the transcript records it.
    log.info("%s; it counts as a failed attempt (recorded in the enclave's transcript)", what)


def _check_resume(
    enclave_dir: Path, ref: str, charged: list[Any], dataset_ledger: Ledger | None
) -> None:
    """A started selection continues only as the selection its dataset ledger charged."""
    if charged and all(c.ref != ref for c in charged):
        raise ConfigError(
            f"the start record in {str(enclave_dir)!r} names another selection than its ledger "
            "charged; the enclave is damaged or assembled from two selections: restore it "
            "from a backup"
        )
    if dataset_ledger is None:
        return
    held = any(c.ref == ref for c in dataset_ledger.charges)
    if charged and not held:
        raise ConfigError(
            f"the selection in {str(enclave_dir)!r} is not charged in the dataset ledger "
            f"{str(dataset_ledger.path)!r} (no charge holds its id): a selection continues "
            "only with the dataset ledger it was charged to. Pass that --ledger, or start "
            "a new selection in a new, empty --private-dir (charged anew)"
        )
    if held and not charged:
        raise ConfigError(
            f"the dataset ledger charged the selection in {str(enclave_dir)!r} but the "
            "enclave's own ledger has no record of it (the enclave was emptied or copied, or "
            "the process stopped between the two charges); its budget is spent. Restore "
            "the enclave from a backup, or start a new selection in a new, empty "
            "--private-dir (charged anew)"
        )


def _flip_coin(
    enclave: Enclave,
    rng: PrivacyRNG,
    *,
    number: int,
    stop_probability: float,
    cost: SelectionCost,
) -> SelectionOutcome | None:
    """The stop coin after failed attempt ``number``, recorded; the outcome if it stops.

    A single attempt (probability 1) stops without drawing anything.
    """
    stop = stop_probability >= 1 or rng.bernoulli(stop_probability)
    enclave.log({"event": "coin", "attempt": number, "stop": bool(stop)})
    if not stop:
        return None
    enclave.log({"event": "stopped", "attempt": number})
    write_atomic(enclave.outcome, json.dumps({"selected": None, "attempts": number}).encode())
    return SelectionOutcome(configuration=None, payload=None, attempts=number, cost=cost)


def _ended(
    enclave: Enclave,
    events: list[dict[str, Any]],
    by_id: dict[str, Configuration],
    cost: SelectionCost,
) -> SelectionOutcome | None:
    """The saved outcome of a selection that has ended; None while it runs.

    A saved result is handed back (publishing may have failed: disk full, unwritable
    --out); nothing is drawn or charged again. A pass recorded without its saved result,
    or a selection that stopped, is never replaced by a new draw.
    """
    enclave_dir = enclave.root
    ended = read_outcome(enclave) if enclave.outcome.exists() else None
    stopped = any(e.get("event") == "stopped" for e in events)
    # A coin that said stop ends the selection, whether or not its 'stopped' record (or
    # outcome) was written before the process stopped: a re-run must not draw again (#58).
    coin = next((e for e in events if e.get("event") == "coin" and e.get("stop")), None)
    if coin is not None and not stopped:
        enclave.log({"event": "stopped", "attempt": coin["attempt"], "completed": True})
        if ended is None:
            write_atomic(
                enclave.outcome,
                json.dumps({"selected": None, "attempts": coin["attempt"]}).encode(),
            )
        stopped = True
    if stopped or (ended is not None and ended.get("selected") is None):
        raise SelectionEnded(
            f"the selection in {str(enclave_dir)!r} has already ended without a release; use a "
            "new --private-dir for a new release (its budget is spent)"
        )
    passed = [e for e in events if e.get("event") == "passed"]
    logged = any(e.get("event") == "attempt" and e.get("passed") for e in events)
    if enclave.selected.exists():
        try:
            saved = pickle.loads(enclave.selected.read_bytes())
        except Exception as exc:
            raise ConfigError(
                f"{str(enclave.selected)!r} is damaged ({type(exc).__name__}); the selected "
                "result cannot be read. Do not start a new selection to replace it (that "
                "spends again): restore the file from a backup"
            ) from None
        if isinstance(saved, dict) and saved.get("format") == 2:
            config_id, attempts, payload = saved["config_id"], saved["attempt"], saved["payload"]
            if not logged:  # stopped after saving, before the transcript's full record
                enclave.log(saved["record"])
        elif ended is not None:  # saved by an earlier version: the outcome names it
            config_id, attempts, payload = ended["selected"], ended["attempts"], saved
        else:
            raise ConfigError(
                f"{str(enclave.selected)!r} has no outcome.json beside it; restore outcome.json "
                "from a backup (a new selection would spend again)"
            )
        if config_id not in by_id:
            raise ConfigError(
                f"the saved selection in {str(enclave_dir)!r} is not one of the candidates; "
                "re-run the original command"
            )
        if ended is None:
            write_atomic(
                enclave.outcome,
                json.dumps({"selected": config_id, "attempts": attempts}).encode(),
            )
        return SelectionOutcome(
            configuration=by_id[config_id], payload=payload, attempts=int(attempts), cost=cost
        )
    if passed or logged or ended is not None:
        raise ConfigError(
            f"the selection in {str(enclave_dir)!r} passed, but its saved result "
            f"({enclave.selected.name}) is missing: the enclave is damaged. Restore the file "
            "from a backup; nothing new is drawn in its place (a second draw would spend "
            "the budget again)"
        )
    return None
