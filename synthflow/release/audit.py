"""Audit a published release using only its files (and optionally the reviewer's spec).

Checks: exactly the package's files, with hashes against the manifest; the data's hash
recorded in ``acceptance.json``; the release's spec against the reviewer's (byte for
byte, with ``--spec``); schema and domains; minimal occurrence and k-anonymity of every
projection that leaves out one column; synthetic constraints; each pass decision from
the published value and threshold; each criterion's epsilon and mechanism against the
spec, its sensitivity recomputed from the published data and parameters, and its noise
sd recomputed from the sensitivity and epsilon; the epsilon arithmetic.

What it cannot check (listed in every report, :data:`NOT_CHECKED`): that the released
values were computed on the private data, that the rows came from the stated generator
and configuration, and anything about the enclave (ledger, transcript). Without a
signature (``release --sign``, ``audit --key``) a tamperer who rewrites every file
consistently is not detected.

A reviewer who names a bundled spec (``births``) of a package released with that spec's
shipped plan (``synthflow release births``) is audited against the shipped plan's spec,
which the package's ``spec.yaml`` is by SHA-256, and the report says so
(:attr:`AuditReport.audited_against`). A check that needs the spec's ``public_sample``
when the package does not carry it (a relative name, not one synthflow ships) is listed
as not checkable (:attr:`AuditReport.unchecked`) and the rest are run: such an audit is
incomplete and does not pass.

Kept whole: every check a reviewer's audit runs is here, in the order the audit reports
them.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from synthflow.config.model import DatasheetSpec, ReleaseSpec
from synthflow.criteria import kind_of, released_once
from synthflow.errors import ConfigError, DataError
from synthflow.filtering import binned_violations
from synthflow.loader import load_spec
from synthflow.release import signing
from synthflow.release.cost import (
    LIU_TALWAR,
    PAPERNOT_STEINKE,
    SINGLE_ATTEMPT,
    SelectionCost,
    selection_cost,
)
from synthflow.release.publish import (
    DATA_FILE,
    MANIFEST,
    RELEASE_FILES,
    public_parameters,
    sha256_file,
)
from synthflow.release.risk import RiskMeasures, risk_measures
from synthflow.space import find_configuration
from synthflow.transform import Transformer

if TYPE_CHECKING:
    from synthflow.acceptance.results import AcceptanceReport

__all__ = ["NOT_CHECKED", "AuditReport", "audit_release"]

NOT_CHECKED = (
    "that the released DP values were computed on the private data (they need the data)",
    "that the rows came from the stated generator and configuration",
    "the enclave's ledger and transcript (they never leave the enclave)",
    "who made the release, unless it is signed and audited with --key (the publisher's "
    "public key, obtained from the publisher): otherwise a consistent rewrite passes",
)
"""What the audit cannot verify from the published files; printed with every report."""

_REL_TOL = 1e-9


@dataclass
class AuditReport:
    """Every check with its outcome; ``ok`` only when all ran and hold."""

    checks: list[tuple[str, bool, str]] = field(default_factory=list)
    unchecked: list[tuple[str, str]] = field(default_factory=list)
    """Checks that could not be run, and why (the public sample is not in the package):
    while any is listed the audit is incomplete and ``ok`` is False."""
    audited_against: str | None = None
    """Which spec the package was audited against when it is not the one given (the
    shipped plan's spec of the bundled spec the reviewer named)."""
    warnings: list[str] = field(default_factory=list)
    """What a reader should know that fails no check (placeholders, unconfirmed
    provenance)."""
    risk: RiskMeasures | None = None
    """Disclosure-risk measures of the released file (information, not a check)."""
    datasheet: str | None = field(default=None, repr=False)
    """The README.md the package's own files give (None if it could not be regenerated):
    what ``synthflow datasheet`` writes after replacing the provenance."""

    def add(self, name: str, ok: bool, detail: str = "") -> None:
        """Record one check."""
        self.checks.append((name, bool(ok), detail))

    def skip(self, name: str, why: str) -> None:
        """Record a check that cannot be run from what the reviewer has."""
        self.unchecked.append((name, why))

    def __repr__(self) -> str:
        if not self.checks:
            return "<AuditReport: no checks yet>"
        if self.failures:
            verdict = f"FAILED ({len(self.failures)} failed)"
        else:
            verdict = "passed" if self.ok else f"INCOMPLETE ({len(self.unchecked)} not run)"
        return f"<AuditReport {verdict}: {len(self.checks)} checks>"

    @property
    def complete(self) -> bool:
        """Whether every check could be run."""
        return not self.unchecked

    @property
    def ok(self) -> bool:
        """Whether every check ran and passed (an incomplete audit does not pass)."""
        return bool(self.checks) and self.complete and all(ok for _, ok, _ in self.checks)

    @property
    def failures(self) -> list[str]:
        """Names and details of the failed checks."""
        return [f"{n}: {d}" for n, ok, d in self.checks if not ok]


def _noise_decides(
    crit: Any, c: dict[str, Any], recomputed: dict[str, Any] | None, *, fit_once: bool
) -> bool:
    """Whether a Laplace criterion's release was decided by its noise.

    The evaluation's rule (:func:`synthflow.criteria.context.noise_decides`), from the
    recomputed sensitivity and the published threshold.
    """
    from synthflow.criteria.context import noise_decides  # noqa: PLC0415

    if recomputed is None or kind_of(crit).mechanism != "laplace" or crit.epsilon <= 0:
        return False
    if released_once(crit, fit_once=fit_once):
        return False
    try:
        sens, threshold = float(recomputed["sensitivity"]), float(c["threshold"])
    except (KeyError, TypeError, ValueError):
        return False  # the threshold and sensitivity checks report it
    return noise_decides(crit, sens, threshold, crit.epsilon)


def _check_budget_fields(
    report: AuditReport, crit: Any, c: dict[str, Any], *, fit_once: bool
) -> None:
    """A criterion's epsilon, mechanism and noise sd against the spec and its sensitivity."""
    kind = kind_of(crit)
    reused = released_once(crit, fit_once=fit_once)
    want_eps = 0.0 if reused else crit.epsilon
    ok = c.get("epsilon") is not None and _close(float(c["epsilon"]), want_eps)
    report.add(
        f"epsilon {crit.name}", ok, "" if ok else f"published {c.get('epsilon')}, spec {want_eps}"
    )
    mech = kind.mechanism
    want_mech = f"{mech} (fit once per release)" if reused else mech
    ok = c.get("mechanism") == want_mech
    report.add(
        f"mechanism {crit.name}",
        ok,
        "" if ok else f"published {c.get('mechanism')!r}, the spec's criterion uses {want_mech!r}",
    )
    sd = (
        kind.published_noise_sd(crit, float(c["sensitivity"]), reused=reused)
        if c.get("sensitivity") is not None
        else None
    )
    if sd is not None:  # the noise its kind's mechanism adds at that sensitivity
        ok = c.get("noise_sd") is not None and _close(float(c["noise_sd"]), sd)
        report.add(
            f"noise sd {crit.name}",
            ok,
            "" if ok else f"published {c.get('noise_sd')}, its sensitivity and epsilon: {sd:.6g}",
        )


def _provenance_warnings(
    report: AuditReport, spec: ReleaseSpec, unconfirmed: Any, replaced: bool
) -> None:
    """Check the provenance warning is there when it must be; warn of placeholders.

    A package made with a bundled spec, or a spec derived from one that states its
    datasheet (``plan``'s output, a copy: :func:`synthflow.resources.bundled_provenance_of`),
    whose provenance no ``--datasheet`` file replaced must carry the warning that it was
    not confirmed: removing it from acceptance.json and the README fails here.
    """
    from synthflow.release._datasheet import (  # noqa: PLC0415
        bundled_provenance_of,
        earlier_provenance_warnings,
        placeholders,
        provenance_warning,
    )

    bundled = None if replaced else bundled_provenance_of(spec)
    expected = provenance_warning(bundled, spec.datasheet) if bundled else None
    if bundled and unconfirmed in earlier_provenance_warnings(bundled, spec.datasheet):
        expected = unconfirmed  # an older package's wording of the same warning
    report.add(
        "provenance warning",
        unconfirmed == expected,
        ""
        if unconfirmed == expected
        else "the package's provenance comes from the bundled spec "
        f"'{bundled}' but does not say it is unconfirmed"
        if expected
        else "acceptance.json's provenance_warning was not written by the release",
    )
    if unconfirmed:
        report.warnings.append(f"provenance not confirmed: {unconfirmed}")
    for item in placeholders(spec):
        report.warnings.append(f"datasheet placeholder: {item}")


def _check_noise_figures(  # noqa: PLR0917  (the audit's parts)
    report: AuditReport,
    acc: dict[str, Any],
    spec: ReleaseSpec,
    tr: Transformer,
    fit_once: bool,
    missing: str | None,
) -> None:
    """The one noise rule's figures (datasheet flags), recomputed from public facts.

    ``missing``: why the spec's public sample cannot be read (:func:`_missing_sample`);
    the figures and the sample's hash are then listed as not checkable.
    """
    from synthflow.acceptance.noise_check import (  # noqa: PLC0415
        noise_figures,
        public_sample,
        public_sample_source,
    )

    if missing is not None:
        report.skip("noise figures", missing)
        if "public_sample" in acc:
            report.skip("public sample", missing)
        return
    sample = public_sample(spec)
    figures = noise_figures(spec, tr, int(acc["rows"]), sample, fit_once=fit_once)
    ok = _same([f.as_dict() for f in figures], acc.get("noise_figures"))
    report.add("noise figures", ok, "" if ok else "differ from those recomputed (public sample, n)")
    if "public_sample" in acc:  # the file the figures came from is the one recomputed on
        same = acc["public_sample"] == public_sample_source(spec)
        report.add("public sample", same, "" if same else "another file than the spec names")


_ACCEPTANCE_FIELDS = frozenset(
    {"synthflow_version", "spec", "configuration", "rows", "data_sha256", "neighbouring",
     "criteria", "passed", "evaluation_epsilon_charged", "budget", "projection_rows",
     "budget_plan", "note", "signed_by", "datasheet", "provenance_warning", "noise_figures",
     "public_sample", "dataset_ledger_spent"}
)  # fmt: skip
"""Every field ``write_release`` writes in acceptance.json; any other is refused."""
_CRITERION_FIELDS = frozenset(
    {"name", "value", "threshold", "passed", "epsilon", "mechanism", "sensitivity",
     "noise_sd", "public_parameters"}
)  # fmt: skip


def _same(a: Any, b: Any) -> bool:
    """JSON values equal, numbers to the audit's relative tolerance."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        return not isinstance(b, bool) and _close(float(a), float(b))
    return bool(a == b) and type(a) is type(b)


def _check_statements(
    report: AuditReport,
    acc: dict[str, Any],
    spec: ReleaseSpec,
    configuration: dict[str, Any],
    cost: SelectionCost | None,
) -> None:
    """Every privacy statement of acceptance.json that the checks above do not read."""
    unknown = sorted(set(acc) - _ACCEPTANCE_FIELDS)
    report.add(
        "acceptance.json fields",
        not unknown,
        f"fields no release writes: {', '.join(unknown)}" if unknown else "",
    )
    listed = [c.get("name") for c in acc.get("criteria", []) if isinstance(c, dict)]
    extra = sorted(
        {str(n) for n in listed} - {c.name for c in spec.criteria}
        | {
            f"{c.get('name')}.{k}"
            for c in acc.get("criteria", [])
            if isinstance(c, dict)
            for k in set(c) - _CRITERION_FIELDS
        }
    )
    report.add(
        "criteria as the spec lists them",
        not extra and len(listed) == len(spec.criteria),
        f"not in the spec or unknown fields: {', '.join(extra)}" if extra else "",
    )
    ok = acc.get("neighbouring") == spec.privacy.neighbouring
    report.add(
        "neighbouring relation",
        ok,
        ""
        if ok
        else f"published {acc.get('neighbouring')!r}, the spec's is {spec.privacy.neighbouring!r}",
    )
    published_spec = acc.get("spec", {})
    ok = published_spec.get("name") == spec.name and published_spec.get("file") == "spec.yaml"
    report.add("spec name and file", ok, "" if ok else "differ from the spec")
    ok = _same(acc.get("configuration"), configuration)
    report.add(
        "configuration", ok, "" if ok else "differs from the spec's configuration of that id"
    )
    expected = cost.to_json() if cost is not None else {}
    budget = acc.get("budget", {})
    differ = sorted(
        k
        for k in set(expected) | set(budget)
        if k not in expected or k not in budget or not _same(budget[k], expected[k])
    )
    report.add(
        "budget statement",
        not differ,
        f"{', '.join(differ)} differ from the recomputed selection cost" if differ else "",
    )
    rows = acc.get("projection_rows")
    ok = rows is None or (
        isinstance(rows, int) and not isinstance(rows, bool) and 0 <= rows <= acc.get("rows", 0)
    )
    report.add("projection rows", ok, "" if ok else "not a row count of this release")


def _check_signature(
    report: AuditReport,
    root: Path,
    acc: dict[str, Any],
    *,
    signed: bool,
    key_path: str | Path | None,
) -> None:
    """The package's signature: against the key beside it, and against the reviewer's."""
    manifest = (root / MANIFEST).read_bytes()
    signature_path, key_beside = root / signing.SIGNATURE, root / signing.PUBLIC_KEY
    if signed:
        try:
            signature = signature_path.read_text("ascii")
            pem = key_beside.read_bytes()
            ok = signing.verify(pem, manifest, signature)
            fp = signing.fingerprint(pem)
        except (OSError, ValueError, ConfigError) as exc:
            ok, fp = False, None
            why = f"cannot be read ({type(exc).__name__})"
        else:
            why = "" if ok else "SIGNATURE is not PUBLIC_KEY.pem's signature of MANIFEST.json"
        report.add("signature (the key beside the release)", ok, why)
        stated = (acc.get("signed_by") or {}).get("public_key_sha256")
        ok_fp = fp is not None and stated == fp
        report.add(
            "signing key fingerprint",
            ok_fp,
            "" if ok_fp else "acceptance.json's signed_by differs from PUBLIC_KEY.pem",
        )
    if key_path is None:
        return
    if not signed:
        report.add("signature (the reviewer's key)", False, "the package is not signed")
        return
    reviewer = Path(key_path).read_bytes()
    try:
        ok = signing.verify(reviewer, manifest, signature_path.read_text("ascii"))
    except (OSError, ConfigError) as exc:
        ok = False
        why = f"{exc}"
    else:
        why = (
            ""
            if ok
            else "not signed by the reviewer's key: the package was changed or made by someone else"
        )
    report.add("signature (the reviewer's key)", ok, why)


def _check_datasheet(  # noqa: PLR0917  (the audit's parts, in its order)
    report: AuditReport,
    root: Path,
    acc: dict[str, Any],
    spec: ReleaseSpec,
    cfg: Any,
    tr: Transformer,
    codes: pd.DataFrame,
    cost: SelectionCost | None,
) -> None:
    """The release README, regenerated from the package's own files, byte for byte.

    Every figure a reader sees (epsilon, delta, the budget split, each criterion's value,
    threshold and noise) is then the one acceptance.json states and the checks above
    verify; an edit of the README alone, MANIFEST rehashed, fails here, naming its line.
    """
    from synthflow.acceptance.noise_check import NoiseFigure  # noqa: PLC0415
    from synthflow.release._datasheet import render_datasheet  # noqa: PLC0415

    path = root / "README.md"
    if cost is None or not path.is_file():
        report.add("datasheet regenerated", False, "cannot be regenerated (see the checks above)")
        return
    try:
        if acc.get("datasheet") is not None:  # provenance from a --datasheet file
            spec = dataclasses.replace(spec, datasheet=DatasheetSpec(**acc["datasheet"]))
        _provenance_warnings(
            report, spec, acc.get("provenance_warning"), acc.get("datasheet") is not None
        )
        expected = render_datasheet(
            spec=spec,
            configuration=cfg,
            transformer=tr,
            candidate=codes,
            report=_published_acceptance(acc, spec, fit_once=cost.fit_once),
            cost=cost,
            plan=acc.get("budget_plan"),
            projection_rows=acc.get("projection_rows"),
            note=acc.get("note"),
            signed_by=(acc.get("signed_by") or {}).get("public_key_sha256"),
            provenance_warning=acc.get("provenance_warning"),
            noise=[NoiseFigure.from_dict(f) for f in acc.get("noise_figures") or ()],
            dataset_spent=_dataset_spent(acc, cost),
        )
    except (KeyError, TypeError, ValueError) as exc:
        report.add("datasheet regenerated", False, f"cannot be regenerated ({type(exc).__name__})")
        return
    report.datasheet = expected
    published = path.read_text("utf-8")
    if published == expected:
        report.add("datasheet regenerated", True)
        return
    line, shown = _first_difference(published, expected)
    report.add(
        "datasheet regenerated",
        False,
        f"README.md line {line + 1} differs from the datasheet the package's files give: {shown!r}",
    )


def _published_acceptance(
    acc: dict[str, Any], spec: ReleaseSpec, *, fit_once: bool
) -> AcceptanceReport:
    """The evaluation's report as acceptance.json states it."""
    from synthflow.acceptance.results import (  # noqa: PLC0415
        AcceptanceReport,
        CriterionResult,
    )

    kinds = {c.name: c.kind for c in spec.criteria}
    results = tuple(
        CriterionResult(
            name=c["name"],
            kind=kinds[c["name"]],
            value=float(c["value"]),
            threshold=float(c["threshold"]),
            passed=bool(c["passed"]),
            epsilon=c["epsilon"],
            mechanism=c["mechanism"],
            sensitivity=c["sensitivity"],
            noise_sd=c["noise_sd"],
            public=c.get("public_parameters") or {},
        )
        for c in acc["criteria"]
    )
    return AcceptanceReport(
        criteria=results,
        passed=bool(acc["passed"]),
        epsilon_total=float(acc["evaluation_epsilon_charged"]),
        exact=False,
        regression_fit_reused=fit_once,
    )


def _first_difference(published: str, expected: str) -> tuple[int, str]:
    """The first line (0-based) where ``published`` differs, and its text as shown."""
    got, want = published.splitlines(), expected.splitlines()
    line = next(
        (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
        min(len(got), len(want)),
    )
    shown = got[line][:120] if line < len(got) else "(end of file)"
    return line, shown


def _dataset_spent(acc: dict[str, Any], cost: SelectionCost) -> dict[str, float] | None:
    """The data's cumulative spend acceptance.json states; never below this release's own."""
    spent = acc.get("dataset_ledger_spent")
    if spent is None:
        return None
    eps = float(spent["epsilon"])
    if not eps > cost.total:
        raise ValueError("dataset_ledger_spent is not above the release's own total")
    return {"epsilon": eps, "delta": float(spent["delta"])}


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=1e-15)


def _published_fit_weights(acc: dict[str, Any]) -> list[float] | None:
    """The regression fit's noise weights as acceptance.json publishes them, if any."""
    for c in acc.get("criteria", []):
        weights = (c.get("public_parameters") or {}).get("noise_weights")
        if (
            isinstance(weights, list)
            and weights
            and all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights)
        ):
            return [float(w) for w in weights]
    return None


def _missing_sample(spec: ReleaseSpec, acc: dict[str, Any]) -> str | None:
    """Why the checks that read the spec's public sample cannot run, or None if they can.

    A relative ``public_sample`` is read beside the spec: the publisher's file, which the
    package does not carry (only a file synthflow ships is found without it).
    """
    from synthflow.public_sample import public_sample_path  # noqa: PLC0415

    try:
        public_sample_path(spec)
    except ConfigError:
        named = acc.get("public_sample")
        sha = named.get("sha256") if isinstance(named, dict) else None
        stated = f", SHA-256 {sha} in acceptance.json" if isinstance(sha, str) else ""
        return (
            f"not checkable without the public sample {spec.public_sample!r}{stated}, which "
            f"the package does not carry (it is not beside {str(spec.path)!r})"
        )
    return None


def _published_parameters(  # noqa: PLR0917  (the audit's parts)
    report: AuditReport,
    spec: ReleaseSpec,
    tr: Transformer,
    codes: pd.DataFrame,
    fit_once: bool,
    missing: str | None,
) -> dict[str, dict[str, Any] | None]:
    """Each criterion's public parameters (:func:`public_parameters`), recomputed.

    None for a criterion whose parameters read the public sample when ``missing`` says
    it cannot be read: its threshold, sensitivity and public parameters are then listed
    as not checkable, and the other criteria's are computed as usual.
    """
    if missing is None:
        return dict(public_parameters(spec, tr, codes, fit_once=fit_once))
    from synthflow.criteria import code_matrix, kind_of  # noqa: PLC0415

    matrix = code_matrix(codes, tr, what="synthetic")
    out: dict[str, dict[str, Any] | None] = {}
    for c in spec.criteria:
        try:
            out[c.name] = kind_of(c).published(c, spec, tr, matrix, fit_once=fit_once)
        except ConfigError:  # it reads the sample (noise_weights: public_sample)
            out[c.name] = None
            for check in ("threshold", "sensitivity", "public parameters"):
                report.skip(f"{check} {c.name}", missing)
    return out


def _shipped_planned_spec(root: Path, spec_path: Path) -> tuple[Path, str] | None:
    """The shipped plan's spec to audit against instead of the reviewer's, or None.

    When the reviewer's spec is a bundled spec (``births``, or a copy of its file) and
    the package's ``spec.yaml`` is, by SHA-256, the spec of the plan shipped for it (the
    one ``synthflow release births`` releases with: the bundled spec with the budget
    split ``synthflow plan`` chose), that shipped file: the package is then audited
    against a spec synthflow ships, made from the one the reviewer named.
    """
    from synthflow.release import shipped  # noqa: PLC0415
    from synthflow.resources import bundled_spec_of  # noqa: PLC0415

    package_spec = root / "spec.yaml"
    if not package_spec.is_file() or not spec_path.is_file():
        return None
    name = bundled_spec_of(sha256_file(spec_path))
    sha = sha256_file(package_spec)
    if name is None or sha == sha256_file(spec_path) or shipped.planned_spec_of(sha) != name:
        return None
    size = shipped.shipped_plan_name_of(sha)  # births, or births@100000 (another size)
    try:
        plan = shipped.shipped_plan(size) if size else None  # checked: made from the spec
    except ConfigError:
        return None
    if plan is None or sha256_file(plan.spec) != sha:
        return None
    return plan.spec, name if size == name else f"{name} ({size}: made for another size)"


def _check_key_path(key_path: str | Path) -> None:
    """Refuse a ``--key`` that cannot be the publisher's public key, saying what it is.

    Raises:
        DataError: A missing path, a directory, or a private key (the ``.key`` file
            ``synthflow keygen`` writes, which stays in the enclave).
    """
    path = Path(key_path)
    if path.is_dir():
        raise DataError(
            f"--key {str(path)!r} is a directory; give the publisher's public key file "
            "(PEM, e.g. steward.pub), obtained from the publisher"
        )
    if not path.is_file():
        raise DataError(f"--key {str(path)!r} does not exist; pass the publisher's public key")
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
    if b"PRIVATE KEY-----" in head:
        public = path.with_suffix(".pub").name if path.suffix == ".key" else None
        give = f"give the public key {public}" if public else "give the public key"
        raise DataError(
            f"--key {str(path)!r}: that is the private signing key; {give} (the .pub file "
            "'synthflow keygen' wrote beside it, which the publisher publishes). The private "
            "key stays in the enclave: anyone who holds it can sign releases"
        )


def audit_release(
    release_dir: str | Path,
    *,
    spec_path: str | Path | None = None,
    key_path: str | Path | None = None,
) -> AuditReport:
    """Run every check on ``release_dir``.

    Raises:
        DataError: If the directory is not a release (no manifest or acceptance file), or
            a package file has a field of the wrong shape (a missing key, text where a
            number belongs, a mapping where a list belongs): one line, never a traceback.
    """
    try:
        return _audit_release(release_dir, spec_path=spec_path, key_path=key_path)
    except (DataError, ConfigError):
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        what = f"no field {exc}" if isinstance(exc, KeyError) else type(exc).__name__
        raise DataError(
            f"{str(release_dir)!r}: acceptance.json (or another package file) is not shaped "
            f"as synthflow writes it ({what}); the package is damaged or was edited: get "
            "the publisher's original package"
        ) from exc


def _audit_release(
    release_dir: str | Path,
    *,
    spec_path: str | Path | None,
    key_path: str | Path | None,
) -> AuditReport:
    root = Path(release_dir)
    if not root.exists():
        raise DataError(f"release directory {str(root)!r} does not exist; check the path")
    if key_path is not None:
        _check_key_path(key_path)
    report = AuditReport()
    if spec_path is not None:
        spec_path = _reviewer_spec_path(report, root, spec_path)
    manifest, acc = _read_package(root)
    # 1. files and hashes
    _check_files(report, root, manifest, acc, key_path=key_path)
    # 2. spec
    spec = _check_spec(report, root, acc, spec_path)
    decoded = _decode_data(report, root, acc, spec)
    if decoded is None:
        return report
    cfg, tr, labels, codes = decoded
    report.add(
        "row count", len(codes) == acc["rows"], f"{len(codes)} rows, published {acc['rows']}"
    )
    _check_face_privacy(report, spec, cfg.min_count, tr, labels, codes)
    # 5-6. decisions and sensitivities
    theorem = acc["budget"].get("theorem", LIU_TALWAR)
    cost = _recomputed_selection_cost(report, spec, acc, theorem)
    if cost is None:
        return report
    missing = _missing_sample(spec, acc)
    _check_criteria(report, spec, acc, tr, codes, cost.fit_once, missing)
    if cost.papernot_steinke or cost.single_attempt:  # recomputed from public inputs above
        spec_cost: SelectionCost | None = cost
    else:
        try:
            spec_cost = selection_cost(spec, fit_once=cost.fit_once)
        except ConfigError:
            spec_cost = None
    _check_statements(report, acc, spec, cfg.to_json(), spec_cost)
    _check_datasheet(report, root, acc, spec, cfg, tr, codes, spec_cost)
    _check_noise_figures(report, acc, spec, tr, cost.fit_once, missing)
    _check_epsilon_arithmetic(report, acc, spec, cost, theorem)
    return report


def _reviewer_spec_path(report: AuditReport, root: Path, spec_path: str | Path) -> str | Path:
    """The spec to audit against: the reviewer's, or the shipped plan's spec made from it."""
    from synthflow.resources import resolve_spec_path  # noqa: PLC0415

    spec_path = resolve_spec_path(spec_path)  # a file, or a bundled spec's name
    if not Path(spec_path).is_file():
        raise DataError(f"the reviewer's spec {str(spec_path)!r} does not exist")
    planned = _shipped_planned_spec(root, Path(spec_path))
    if planned is not None:
        spec_path, name = planned
        report.audited_against = f"the shipped plan's spec for {name}, public_data/{spec_path.name}"
    return spec_path


def _read_package(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The manifest's file hashes and acceptance.json, refused unless both are JSON objects."""
    manifest_path = root / MANIFEST
    if not manifest_path.is_file() or not (root / "acceptance.json").is_file():
        raise DataError(
            f"{str(root)!r} is not a synthflow release (needs {MANIFEST} and acceptance.json)"
        )
    try:
        manifest = json.loads(manifest_path.read_text("utf-8"))["files"]
        acc: dict[str, Any] = json.loads((root / "acceptance.json").read_text("utf-8"))
        if not isinstance(manifest, dict) or not isinstance(acc, dict):
            raise TypeError("not a JSON object")
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else type(exc).__name__
        raise DataError(
            f"{str(root)!r}: {MANIFEST} or acceptance.json is not a synthflow release file "
            f"({why}); the release is damaged or not a release"
        ) from None
    return manifest, acc


def _check_files(
    report: AuditReport,
    root: Path,
    manifest: dict[str, Any],
    acc: dict[str, Any],
    *,
    key_path: str | Path | None,
) -> None:
    """The package's file set, its signature, and each file's hash against the manifest."""
    entries = {p.name for p in root.iterdir()}
    signed = signing.SIGNATURE in entries or signing.PUBLIC_KEY in entries or "signed_by" in acc
    expected_files = set(RELEASE_FILES) | (
        {signing.SIGNATURE, signing.PUBLIC_KEY} if signed else set()
    )
    unexpected = sorted(entries - expected_files)
    missing_files = sorted(expected_files - entries)
    report.add(
        "file set",
        not unexpected
        and not missing_files
        and set(manifest) == expected_files - {MANIFEST, signing.SIGNATURE},
        f"unexpected {unexpected}, missing {missing_files}; a release holds exactly "
        f"{', '.join(sorted(expected_files))}"
        if unexpected or missing_files
        else f"the manifest lists {', '.join(sorted(manifest))}",
    )
    _check_signature(report, root, acc, signed=signed, key_path=key_path)
    present = {p.name for p in root.iterdir() if p.is_file()} - {MANIFEST, signing.SIGNATURE}
    for name in sorted(set(manifest) | present):
        if name not in manifest:
            report.add(f"hash {name}", False, "file is not listed in the manifest")
        elif name not in present:
            report.add(f"hash {name}", False, "file listed in the manifest is missing")
        else:
            ok = sha256_file(root / name) == manifest[name]
            report.add(f"hash {name}", ok, "" if ok else "SHA-256 differs from the manifest")
    if (root / DATA_FILE).is_file():
        ok = acc.get("data_sha256") == sha256_file(root / DATA_FILE)
        report.add(
            "data hash in acceptance.json",
            ok,
            "" if ok else f"{DATA_FILE} differs from the data the criteria were released for",
        )


def _check_spec(
    report: AuditReport, root: Path, acc: dict[str, Any], spec_path: str | Path | None
) -> ReleaseSpec:
    """The spec audited against (the reviewer's, else the package's), checked by hash."""
    spec: ReleaseSpec = load_spec(spec_path or root / "spec.yaml")
    ok = spec.sha256 == acc["spec"]["sha256"]
    report.add("spec hash", ok, "" if ok else "the spec differs from the one the release used")
    if spec_path is not None and (root / "spec.yaml").is_file():
        same = sha256_file(root / "spec.yaml") == sha256_file(Path(spec_path))
        report.add(
            "release spec.yaml equals the reviewer's spec",
            same,
            "" if same else "the published spec.yaml is not the reviewer's file (byte for byte)",
        )
    return spec


def _decode_data(
    report: AuditReport, root: Path, acc: dict[str, Any], spec: ReleaseSpec
) -> tuple[Any, Transformer, pd.DataFrame, pd.DataFrame] | None:
    """The configuration, its transformer, and the data as labels and as codes.

    None (the failure recorded) when the configuration is not the spec's or the data
    does not fit its schema and domains: the checks that follow cannot run.
    """
    try:
        cfg = find_configuration(spec, acc["configuration"]["id"])
    except ConfigError as exc:
        report.add("configuration", False, str(exc))
        return None
    tr = Transformer(spec, cfg.transformations)
    labels = pd.read_csv(root / DATA_FILE, dtype=str, keep_default_na=False)
    try:
        codes = tr.from_labels(labels)
        extra = set(labels.columns) - set(spec.column_names)
        report.add(
            "schema and domains",
            not extra,
            f"unexpected columns {', '.join(sorted(extra))}" if extra else "",
        )
    except DataError as exc:
        report.add("schema and domains", False, str(exc))
        return None
    return cfg, tr, labels, codes


def _check_face_privacy(  # noqa: PLR0917  (the audit's parts)
    report: AuditReport,
    spec: ReleaseSpec,
    k: int,
    tr: Transformer,
    labels: pd.DataFrame,
    codes: pd.DataFrame,
) -> None:
    """Risk measures (information), minimal occurrence, k-anonymity and constraints."""
    # Disclosure-risk measures of the released file (public; information for reviewers).
    keys = spec.disclosure.key_variables or tuple(
        c for c in spec.column_names if c != spec.disclosure.sensitive
    )
    report.risk = risk_measures(
        labels[list(spec.column_names)],
        keys,
        sensitive=spec.disclosure.sensitive,
        max_msu_size=spec.disclosure.max_msu_size,
    )
    # 3. face privacy
    counts = codes.groupby(list(codes.columns)).size()
    report.add(
        f"every record appears >= {k} times",
        counts.min() >= k,
        "" if counts.min() >= k else "some record appears fewer times",
    )
    for cols in itertools.combinations(codes.columns, len(codes.columns) - 1):
        smallest = codes.groupby(list(cols)).size().min()
        report.add(
            f"{k}-anonymous without {', '.join(sorted(set(codes.columns) - set(cols)))}",
            smallest >= k,
            "" if smallest >= k else "a projection has a group smaller than k",
        )
    # 4. constraints
    bad = int(binned_violations(codes, spec.synthetic_constraints, tr).sum())
    report.add("synthetic constraints", bad == 0, f"{bad} rows violate them" if bad else "")


def _recomputed_selection_cost(
    report: AuditReport, spec: ReleaseSpec, acc: dict[str, Any], theorem: str
) -> SelectionCost | None:
    """The selection's cost: as published, or recomputed from public inputs.

    None (the failure recorded) when a Papernot-Steinke or single-attempt accounting
    cannot be recomputed, or the theorem is unknown.
    """
    cost = SelectionCost(
        generator_epsilon=acc["budget"]["generator_epsilon"],
        evaluation_epsilon=acc["budget"]["evaluation_epsilon"],
        fit_epsilon=acc["budget"]["regression_fit_once_epsilon"] or 0.0,
    )
    if theorem in (PAPERNOT_STEINKE, SINGLE_ATTEMPT):
        # Recompute the selection's accounting from public inputs: the spec, the
        # shortlist's configurations (their largest generator delta), and for
        # Papernot-Steinke the row count and the stop probability (a single attempt's is 1).
        single = theorem == SINGLE_ATTEMPT
        label = "single attempt" if single else "Papernot-Steinke"
        # Without the public sample, an exact total is recomputed from the fit's published
        # noise weights, which are then listed as not checkable (below).
        weights = _published_fit_weights(acc) if _missing_sample(spec, acc) else None
        try:
            b = acc["budget"]
            cost = selection_cost(
                spec,
                fit_once=cost.fit_once,
                candidates=[find_configuration(spec, i) for i in b["candidates"]],
                rows=None if single else int(b["rows"]),
                stop_probability=1.0 if single else float(b["stop_probability"]),
                fit_weights=weights,
            )
            ok_sel = cost.theorem == theorem and _close(
                b.get("total_delta", -1.0), cost.total_delta
            )
            why = "" if ok_sel else f"the published delta or candidates do not give {label}"
        except (ConfigError, KeyError, TypeError, ValueError) as exc:
            ok_sel, why = False, f"cannot recompute it: {exc}"
        report.add(f"selection accounting ({label}, recomputed)", ok_sel, why)
        if not ok_sel:
            return None
        within_delta = cost.total_delta <= spec.privacy.total_delta + 1e-15
        report.add(
            "delta within the spec's total",
            within_delta,
            "" if within_delta else f"{cost.total_delta} > {spec.privacy.total_delta}",
        )
    elif theorem != LIU_TALWAR:
        report.add("selection theorem", False, f"unknown theorem {theorem!r}")
        return None
    return cost


def _check_criteria(  # noqa: PLR0917  (the audit's parts)
    report: AuditReport,
    spec: ReleaseSpec,
    acc: dict[str, Any],
    tr: Transformer,
    codes: pd.DataFrame,
    fit_once: bool,
    missing: str | None,
) -> None:
    """Each criterion's threshold, decision, budget fields, sensitivity and parameters."""
    params = _published_parameters(report, spec, tr, codes, fit_once, missing)
    published = {c["name"]: c for c in acc["criteria"]}
    for crit in spec.criteria:
        c = published.get(crit.name)
        if c is None:
            report.add(f"criterion {crit.name}", False, "missing from acceptance.json")
            continue
        recomputed = params[crit.name]
        if recomputed is not None:
            expected_threshold = crit.threshold
            if "pseudo_threshold" in recomputed:
                expected_threshold = min(crit.threshold, recomputed["pseudo_threshold"])
            ok_t = _close(c["threshold"], expected_threshold)
            report.add(
                f"threshold {crit.name}",
                ok_t,
                "" if ok_t else f"published {c['threshold']}, spec gives {expected_threshold}",
            )
        decision = c["value"] < c["threshold"]
        why = (
            f"value {c['value']} vs threshold {c['threshold']} gives passed={decision}, "
            f"published {c['passed']}"
            if not (decision == c["passed"] and c["passed"])
            else "its noise at the candidate's own groups or counts decides it (a perfect "
            "candidate would pass fewer than 2 releases in 3): it cannot pass"
            if _noise_decides(crit, c, recomputed, fit_once=fit_once)
            else ""
        )
        report.add(f"decision {crit.name}", not why, why)
        _check_budget_fields(report, crit, c, fit_once=fit_once)
        if recomputed is None:  # listed as not checkable
            continue
        sens = recomputed["sensitivity"]
        ok_s = c["sensitivity"] is not None and _close(c["sensitivity"], sens)
        report.add(
            f"sensitivity {crit.name}",
            ok_s,
            "" if ok_s else f"published {c['sensitivity']}, recomputed {sens}",
        )
        pub = {k: v for k, v in recomputed.items() if k != "sensitivity"}
        ok_p = json.loads(json.dumps(pub)) == c.get("public_parameters")
        report.add(f"public parameters {crit.name}", ok_p, "" if ok_p else "differ from recomputed")
    report.add(
        "overall decision",
        acc["passed"] is True and all(c["passed"] for c in acc["criteria"]),
        "" if acc["passed"] else "the release says it did not pass",
    )


def _check_epsilon_arithmetic(
    report: AuditReport,
    acc: dict[str, Any],
    spec: ReleaseSpec,
    cost: SelectionCost,
    theorem: str,
) -> None:
    """The budget's components, charge, total and plan against the spec (7.)."""
    # 7. epsilon arithmetic
    eps_eval = math.fsum(crit.epsilon for crit in spec.criteria)
    ok_e = _close(cost.evaluation_epsilon, eps_eval) and _close(
        cost.generator_epsilon, spec.privacy.generator_epsilon
    )
    report.add("budget components", ok_e, "" if ok_e else "differ from the spec")
    charged = math.fsum(
        crit.epsilon for crit in spec.criteria if not released_once(crit, fit_once=cost.fit_once)
    )
    ok_c = _close(float(acc.get("evaluation_epsilon_charged", -1.0)), charged)
    report.add(
        "evaluation epsilon charged",
        ok_c,
        "" if ok_c else f"published {acc.get('evaluation_epsilon_charged')}, spec gives {charged}",
    )
    ok_total = _close(acc["budget"]["total_epsilon"], cost.total)
    report.add(
        f"budget total ({theorem})",
        ok_total,
        "" if ok_total else f"published {acc['budget']['total_epsilon']}, adds up to {cost.total}",
    )
    within = cost.total <= spec.privacy.total_epsilon + 1e-12
    report.add(
        "budget within the spec's total",
        within,
        "" if within else f"{cost.total} > {spec.privacy.total_epsilon}",
    )
    plan = acc.get("budget_plan")
    if plan is not None:  # budgets from 'synthflow plan': the plan must be this spec's
        ok_p = isinstance(plan, dict) and plan.get("planned_spec_sha256") == spec.sha256
        report.add(
            "budget plan made this spec",
            ok_p,
            "" if ok_p else "acceptance.json's budget_plan names another spec",
        )
        ok_pt = ok_p and _close(float(plan.get("total_epsilon", -1)), cost.total)
        report.add(
            "budget plan total",
            ok_pt,
            "" if ok_pt else f"the plan's total differs from the spent {cost.total}",
        )
