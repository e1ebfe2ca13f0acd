"""The release job's checks before anything is charged: outputs, plan, budget, provenance."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthflow._notices import say
from synthflow.acceptance.noise_check import public_sample, space_noise_warning
from synthflow.errors import (
    ConfigError,
)
from synthflow.ledger import Ledger, read_ledger
from synthflow.release._datasheet import bundled_provenance_of, provenance_warning

if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec
    from synthflow.space import Configuration

__all__ = [
    "_check_dataset_budget",
    "_check_plan_holds",
    "_check_writable",
    "_planned_options",
    "_read_plan",
    "_spent",
    "_unconfirmed_provenance",
    "selection_spend_line",
    "why_hopeless",
]


def _spent(private_dir: Path) -> float:
    """Epsilon the enclave's ledger records (0 if the selection has not charged)."""
    try:
        return read_ledger(private_dir / "ledger.jsonl").spent_epsilon
    except (ConfigError, OSError):
        return 0.0


def selection_spend_line(private_dir: Path, ledger_path: str | Path | None) -> str:
    """What a selection spent, what its dataset ledger has left and where it is.

    Said at every end without a release (a stop, an error or an interrupt after the
    charge): "spent epsilon X (delta D) of Y; Z left; ledger PATH".
    """
    try:
        enclave = read_ledger(private_dir / "ledger.jsonl")
        eps, delta = enclave.spent_epsilon, enclave.spent_delta
    except (ConfigError, OSError, ValueError):
        return f"the enclave ledger {str(private_dir / 'ledger.jsonl')!r} cannot be read"
    if eps == 0:
        return "nothing was spent"
    if ledger_path is None:
        where = private_dir / "ledger.jsonl"
        return f"spent epsilon {eps:.6g} (delta {delta:.3g}); enclave ledger {where}"
    try:
        shared = read_ledger(ledger_path)
        header = shared.header or {}
        total, total_delta = float(header["total_epsilon"]), float(header.get("total_delta", 0))
    except (ConfigError, OSError, ValueError, KeyError, TypeError):
        return f"spent epsilon {eps:.6g} (delta {delta:.3g}); ledger {ledger_path}"
    left = max(total - shared.spent_epsilon, 0.0)
    left_delta = max(total_delta - shared.spent_delta, 0.0)
    return (
        f"spent epsilon {eps:.6g} (delta {delta:.3g}) of the total {total:g}; {left:.6g} left "
        f"(delta {left_delta:.3g}); ledger {ledger_path}"
    )


def _check_writable(option: str, path: Path) -> None:
    """Refuse an output that cannot be written (read-only, not a directory) up front."""
    from synthflow._outputs import check_writable  # noqa: PLC0415

    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise ConfigError(f"{option} {str(path)!r}: {str(existing)!r} is not a directory")
    check_writable(path, option=option)


def _check_dataset_budget(
    shared: Ledger | None, cost: Any, ledger_path: Any, *, resuming: bool, private_dir: Path
) -> None:
    """Refuse a new selection the dataset's ledger cannot afford, before its enclave exists.

    A charge refused later would leave a started selection in a new --private-dir. When
    the budget is short because a selection is running in ``private_dir`` now (the loser
    of two identical commands), that is said, not what is left.
    """
    from synthflow.release.enclave import enclave_busy  # noqa: PLC0415
    from synthflow.release.shortfall import shortfall  # noqa: PLC0415

    if shared is None or resuming or shared.can_afford(cost.total, cost.total_delta):
        return
    if enclave_busy(private_dir):
        raise ConfigError(
            f"a selection is running in --private-dir {str(private_dir)!r} now (another "
            "synthflow release holds its lock) and has charged the dataset's ledger: wait "
            "for it to finish, then re-run the same command to see its outcome. Nothing "
            "was spent by this command"
        )
    short = shortfall(
        cost,
        epsilon=shared.remaining_epsilon,
        delta=max(shared.total_delta - shared.spent_delta, 0.0),
        where=f"the dataset's ledger {str(ledger_path)!r}",
        total=(shared.total_epsilon, shared.total_delta),
    )
    short = short or f"epsilon {cost.total:g} (delta {cost.total_delta:g}), more than is left"
    raise ConfigError(f"this release costs {short}; nothing was spent")


def _check_plan_holds(
    plan: dict[str, Any],
    total: float,
    candidate_ids: list[str],
    *,
    delta: float = 0.0,
    theorem: str | None = None,
) -> None:
    """A planned release runs the plan's mechanism, on its candidates, within its budget."""
    planned = plan.get("candidates")
    if isinstance(planned, dict) and sorted(planned) != sorted(candidate_ids):
        raise ConfigError(
            "the candidates file differs from the plan's candidates; give the candidates.yaml "
            "written beside that plan.json (nothing was spent)"
        )
    planned_delta = plan.get("total_delta")
    if planned_delta is not None:  # 0 for a pure-DP plan: then no delta may be spent
        if delta > float(planned_delta) * (1 + 1e-9):
            raise ConfigError(
                f"this release would spend delta {delta:.3g} but its plan says "
                f"{float(planned_delta):.3g}; give the spec written beside that plan.json, or "
                "re-plan. Nothing was spent"
            )
    if theorem is not None and plan.get("selection") not in (None, theorem):
        raise ConfigError(
            f"this release would run {theorem} but its plan chose {plan['selection']}; drop "
            "the options that change it or re-plan. Nothing was spent"
        )
    if total > float(plan["total_epsilon"]) + 1e-9:
        raise ConfigError(
            f"this release would cost epsilon {total:.6g} but its plan says "
            f"{float(plan['total_epsilon']):.6g} (the cost depends on the row count, which "
            "differs from the plan's); re-plan with the release's row count. Nothing was spent"
        )


def _planned_options(
    plan: dict[str, Any] | None, fit_once: bool | None, stop_probability: float | None
) -> tuple[bool | None, float | None]:
    """The fit mode and stop probability a planned release runs with: the plan's.

    An option that changes the planned mechanism (the fit mode, another stop probability:
    a single attempt against Papernot-Steinke or Liu-Talwar) is refused, before any
    charge; an option equal to the plan's is accepted.
    """
    if plan is None:
        return fit_once, stop_probability
    if fit_once is not None and bool(fit_once) != bool(plan["fit_once"]):
        raise ConfigError(
            f"--fit-once {'given' if fit_once else 'absent'} but the plan was made for a "
            f"regression fit {'once per release' if plan['fit_once'] else 'per candidate'}; "
            "drop the flag (the plan's choice is used) or re-plan"
        )
    planned = float(plan.get("stop_probability", plan["options"]["stop_probability"]))
    if stop_probability is not None and float(stop_probability) != planned:
        raise ConfigError(
            f"--stop-probability {stop_probability:g} but the plan was made for "
            f"{planned:g} ({'a single attempt' if planned == 1 else 'many attempts'}); "
            "drop the option (the plan's is used) or re-plan. Nothing was spent"
        )
    return bool(plan["fit_once"]), planned


def _read_plan(path: str | Path, spec: Any) -> dict[str, Any]:
    """plan.json, checked to be the plan that wrote ``spec``."""
    p = Path(path)
    try:
        plan = json.loads(p.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"--plan {str(p)!r} does not exist; give plan.json from 'synthflow plan'"
        ) from None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else type(exc).__name__
        raise ConfigError(f"--plan {str(p)!r} is not a plan.json ({why})") from None
    needed = {"planned_spec_sha256", "fit_once", "options", "total_epsilon", "release_probability"}
    if not isinstance(plan, dict) or not needed <= set(plan):
        raise ConfigError(f"--plan {str(p)!r} is not a plan.json written by 'synthflow plan'")
    _check_plan_types(p, plan)
    if plan["planned_spec_sha256"] != spec.sha256:
        raise ConfigError(
            f"--plan {str(p)!r} planned another spec (sha256 "
            f"{plan['planned_spec_sha256'][:12]}..., {spec.path} is {spec.sha256[:12]}...): "
            "give the spec.yaml written beside that plan"
        )
    return plan


def _check_plan_types(path: Path, plan: dict[str, Any]) -> None:
    """Each field release reads has the type 'synthflow plan' writes (else one line, exit 2)."""

    def number(value: Any) -> bool:  # finite: json reads NaN and Infinity as floats
        return (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        )

    options = plan["options"]
    gamma: Any = (
        plan.get("stop_probability", options.get("stop_probability", 0.0))
        if isinstance(options, dict)
        else None
    )
    problems = [
        name
        for name, ok in (
            ("options (a mapping)", isinstance(options, dict)),
            ("planned_spec_sha256 (text)", isinstance(plan["planned_spec_sha256"], str)),
            ("fit_once (true or false)", isinstance(plan["fit_once"], bool)),
            ("total_epsilon (a number)", number(plan["total_epsilon"])),
            ("total_delta (a number)", plan.get("total_delta") is None
             or number(plan["total_delta"])),
            ("release_probability (a number)", number(plan["release_probability"])),
            ("stop_probability (a number in [0, 1])", number(gamma) and 0 <= float(gamma) <= 1),
            ("candidates (a mapping)", plan.get("candidates") is None
             or isinstance(plan["candidates"], dict)),
        )
        if not ok
    ]  # fmt: skip
    if problems:
        raise ConfigError(
            f"--plan {str(path)!r} is damaged or edited: {', '.join(problems)} "
            "expected; give the plan.json that 'synthflow plan' wrote (nothing was spent)"
        )


def _unconfirmed_provenance(spec: Any, datasheet: Any) -> str | None:
    """The datasheet's warning when its provenance is a bundled spec's (said on stderr too)."""
    bundled = bundled_provenance_of(spec) if datasheet is None else None
    if bundled is None:
        return None
    warning = provenance_warning(bundled, spec.datasheet)
    say(f"synthflow release: warning: {warning}")
    return warning


def why_hopeless(
    spec: ReleaseSpec,
    candidates: list[Configuration],
    n: int,
    pass_rates: list[float | None],
    *,
    fit_once: bool = False,
) -> str:
    """Why private selection would spend its budget for (almost) nothing; '' if it would not.

    Public facts only: the spec, the candidates' bins, n, the spec's public sample and
    the shortlist's pass estimates on public data. Three reasons: a criterion that two
    public samples of n rows already fail without noise
    (:func:`~synthflow.acceptance.attainable.attainability_warnings`), a noise-dominated
    DP criterion (the one noise rule, :mod:`~synthflow.acceptance.noise_check`, with the
    epsilon each would need), or no candidate that ever passed in the public sweep.
    """
    from synthflow.acceptance.attainable import (  # noqa: PLC0415
        agreed_threshold_path,
        unattainable_criteria,
    )

    sample = public_sample(spec)
    failing = {} if sample is None else unattainable_criteria(spec, candidates, n, sample)
    reasons = [line for line, _ in failing.values()]
    from synthflow.release.shipped import planned_spec_of  # noqa: PLC0415
    from synthflow.resources import bundled_spec  # noqa: PLC0415

    planned = planned_spec_of(spec.sha256)  # a shipped plan's spec: copy the bundled one
    source = bundled_spec(planned) if planned else None
    reachable = {name: value for name, (_, value) in failing.items()}
    path = agreed_threshold_path(spec, n, reachable, source=source)
    if path:  # what that size can reach, and the exact commands that get it
        reasons.append(path)
    noisy = space_noise_warning(spec, candidates, n, fit_once=fit_once, needed=True)
    if noisy:
        reasons.append(noisy)
    known = [p for p in pass_rates if p is not None]
    if known and max(known) <= 0:
        reasons.append(
            f"none of the {len(known)} shortlisted configurations passed in the public sweep "
            "(every pass estimate is 0): selection would most likely stop empty-handed or run "
            "out of attempts"
        )
    return "\n".join(reasons)
