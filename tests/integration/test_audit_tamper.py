"""[tests] item 3: one tampering per audit check, the MANIFEST rehashed each time.

A careful forger edits one statement of a release and rehashes MANIFEST.json; the
audit must then fail, naming the check that reads that statement. Every field of
acceptance.json is edited in turn (except ``synthflow_version``, which states no privacy
property), and the data and spec are tampered with so that each check on them fails.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import yaml

from synthflow.cli import main
from synthflow.release import audit_release
from synthflow.release.publish import sha256_file
from synthflow.space import expand_space


def _release(root: Path, spec, frame, *extra: str) -> Path:
    """A seeded public release of the clinic data under ``root`` (``extra``: options)."""
    data = root / "clinic.csv"
    frame.to_csv(data, index=False)
    cands = root / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    out = root / "release"
    argv = ["release", spec.path, "--data", str(data), "--candidates", str(cands),
            "--out", str(out), "--private-dir", str(root / "enclave"), "--seed", "3",
            "--public", "--quiet", "--max-attempts", "200", *extra]  # fmt: skip
    assert main(argv) == 0
    return out


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, small_spec, small_frame) -> Path:
    out = _release(tmp_path_factory.mktemp("pristine"), small_spec, small_frame)
    assert audit_release(out).ok
    return out


def _acc(**path_value) -> Callable[[Path], None]:
    """Set ``acceptance.json`` fields, e.g. ``budget__total_epsilon=1.0``."""

    def edit(root: Path) -> None:
        acc = json.loads((root / "acceptance.json").read_text())
        for path, value in path_value.items():
            *parents, last = path.split("__")
            obj = acc
            for key in parents:
                obj = obj[int(key)] if key.isdigit() else obj[key]
            key = int(last) if last.isdigit() else last
            if value is _DELETE:
                del obj[key]
            else:
                obj[key] = value
        (root / "acceptance.json").write_text(json.dumps(acc, indent=2))

    return edit


_DELETE = object()


def _data(edit: Callable[[pd.DataFrame], pd.DataFrame]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        df = pd.read_csv(root / "synthetic.csv", dtype=str, keep_default_na=False)
        edit(df).to_csv(root / "synthetic.csv", index=False)

    return apply


def _violating_group(df: pd.DataFrame) -> pd.DataFrame:
    # Every copy of one record becomes a child with more than 10 visits (the spec's
    # constraint 1): as frequent as before, so k-anonymity still holds.
    first = df.iloc[0]
    same = (df == first).all(axis=1)
    df.loc[same, ["age", "visits"]] = ["<18", ">10"]
    return df


def _unique_record(df: pd.DataFrame) -> pd.DataFrame:
    keys = set(map(tuple, df.to_numpy()))
    for value in ("north", "south", "east", "west"):
        trial = df.iloc[0].copy()
        trial["region"] = value
        if tuple(trial) not in keys:
            df.iloc[0] = trial
            return df
    raise AssertionError("no new record found")


def _spec_text(old: str, new: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        text = (root / "spec.yaml").read_text()
        assert old in text
        (root / "spec.yaml").write_text(text.replace(old, new))

    return edit


CASES: dict[str, tuple[Callable[[Path], None], tuple[str, ...]]] = {
    # acceptance.json, field by field
    "spec.name": (_acc(spec__name="births"), ("spec name and file",)),
    "spec.sha256": (_acc(spec__sha256="0" * 64), ("spec hash",)),
    "spec.file": (_acc(spec__file="other.yaml"), ("spec name and file",)),
    "configuration.id": (_acc(configuration__id="privbayes-0000000000"), ("configuration",)),
    "configuration.min_count": (_acc(configuration__min_count=1), ("configuration",)),
    "configuration.model": (_acc(configuration__model="mwem"), ("configuration",)),
    "configuration.hyperparameters": (
        _acc(configuration__hyperparameters__degree=3),
        ("configuration",),
    ),
    "rows": (_acc(rows=601), ("row count",)),
    "data_sha256": (_acc(data_sha256="0" * 64), ("data hash in acceptance.json",)),
    "neighbouring": (_acc(neighbouring="add_remove"), ("neighbouring relation",)),
    "criteria.value": (_acc(criteria__0__value=1e9), ("decision marginals",)),
    "criteria.threshold": (_acc(criteria__0__threshold=1e9), ("threshold marginals",)),
    "criteria.passed": (_acc(criteria__0__passed=False), ("decision marginals",)),
    "criteria.epsilon": (_acc(criteria__0__epsilon=5.0), ("epsilon marginals",)),
    "criteria.mechanism": (_acc(criteria__0__mechanism="gaussian"), ("mechanism marginals",)),
    "criteria.sensitivity": (_acc(criteria__0__sensitivity=1e-9), ("sensitivity marginals",)),
    "criteria.noise_sd": (_acc(criteria__0__noise_sd=1e-9), ("noise sd marginals",)),
    "criteria.public_parameters": (
        _acc(criteria__0__public_parameters__n=6000),
        ("public parameters marginals",),
    ),
    "criteria.name": (_acc(criteria__0__name="renamed"), ("criterion marginals",)),
    "criteria.extra_field": (_acc(criteria__0__note="fine"), ("criteria as the spec lists them",)),
    "criteria.removed": (_acc(criteria__2=_DELETE), ("criterion unmatched",)),
    "passed": (_acc(passed=False), ("overall decision",)),
    "evaluation_epsilon_charged": (
        _acc(evaluation_epsilon_charged=0.01),
        ("evaluation epsilon charged",),
    ),
    "budget.generator_epsilon": (_acc(budget__generator_epsilon=0.5), ("budget components",)),
    "budget.evaluation_epsilon": (_acc(budget__evaluation_epsilon=0.1), ("budget components",)),
    "budget.regression_fit_once_epsilon": (
        _acc(budget__regression_fit_once_epsilon=0.1),
        ("budget statement",),
    ),
    "budget.theorem": (_acc(budget__theorem="laplace"), ("selection theorem",)),
    "budget.selection_factor": (_acc(budget__selection_factor=1), ("budget statement",)),
    "budget.formula": (_acc(budget__formula="eps_gen + eps_eval"), ("budget statement",)),
    "budget.total_epsilon": (_acc(budget__total_epsilon=1.0), ("budget total",)),
    "projection_rows": (_acc(projection_rows=-5), ("projection rows",)),
    # The package was made with the bundled example_small spec: its provenance warning
    # can be neither edited nor removed, nor hidden by claiming a --datasheet file.
    "provenance_warning": (
        _acc(provenance_warning="all confirmed"),
        ("provenance warning", "datasheet regenerated"),
    ),
    "provenance_warning.removed": (_acc(provenance_warning=_DELETE), ("provenance warning",)),
    "datasheet": (_acc(datasheet={"title": "Official"}), ("provenance warning",)),
    "an unknown field": (_acc(differentially_private=True), ("acceptance.json fields",)),
    # The one noise rule's figures: a flag hidden by raising a probability is recomputed.
    "noise_figures": (
        _acc(noise_figures__0__perfect_pass=1.0),
        ("noise figures", "datasheet regenerated"),
    ),
    "noise_figures.removed": (_acc(noise_figures=_DELETE), ("noise figures",)),
    # the data
    "a constraint-violating record": (_data(_violating_group), ("synthetic constraints",)),
    "a unique record": (
        _data(_unique_record),
        ("every record appears >= 3 times", "3-anonymous without"),
    ),
    "an extra column": (_data(lambda df: df.assign(name="x")), ("schema and domains",)),
    # the spec
    "the spec's total lowered": (
        _spec_text("total_epsilon: 5.0", "total_epsilon: 4.0"),
        ("spec hash", "budget within the spec's total"),
    ),
    "the spec's generator budget": (
        _spec_text("generator_epsilon: 2.0", "generator_epsilon: 1.0"),
        ("spec hash", "budget components", "budget statement"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_tampering_fails_the_check_that_reads_it(pristine, tmp_path, case):
    tamper, expected = CASES[case]
    root = tmp_path / "release"
    shutil.copytree(pristine, root)
    tamper(root)
    files = sorted(p.name for p in root.iterdir() if p.name != "MANIFEST.json")
    (root / "MANIFEST.json").write_text(
        json.dumps({"files": {f: sha256_file(root / f) for f in files}})
    )  # a careful forger rehashes
    report = audit_release(root)
    assert not report.ok
    for name in expected:
        assert any(f.startswith(name) for f in report.failures), (name, report.failures)


def test_every_field_of_acceptance_json_is_tampered_with(pristine):
    acc = json.loads((pristine / "acceptance.json").read_text())
    covered = {case.split(".")[0] for case in CASES}
    assert set(acc) - {"synthflow_version"} <= covered
    assert {f"criteria.{k}" for k in acc["criteria"][0]} <= set(CASES)
    assert {f"budget.{k}" for k in acc["budget"]} <= set(CASES)


def _bumped(token: str) -> str:
    """Another number written like ``token`` (its last digit changed)."""
    last = token[-1]
    return token[:-1] + ("0" if last == "9" else str(int(last) + 1))


def test_every_figure_of_the_release_readme_is_checked(pristine, tmp_path):
    # [inputs] 3: the README's "epsilon = 9.38" changed to "0.5" passed the audit. The
    # audit regenerates the datasheet from the package's files: every figure a reader
    # sees, edited alone with MANIFEST rehashed, fails it, naming the line.
    import re

    text = (pristine / "README.md").read_text()
    figures = list(re.finditer(r"(?<![\w.-])\d+(?:\.\d+)?(?:e-?\d+)?", text))
    assert len(figures) > 40
    root = tmp_path / "release"
    shutil.copytree(pristine, root)
    for m in figures:
        edited = text[: m.start()] + _bumped(m.group()) + text[m.end() :]
        (root / "README.md").write_text(edited)
        files = sorted(p.name for p in root.iterdir() if p.name != "MANIFEST.json")
        (root / "MANIFEST.json").write_text(
            json.dumps({"files": {f: sha256_file(root / f) for f in files}})
        )
        failures = audit_release(root).failures
        line = text.count("\n", 0, m.start()) + 1
        assert any(
            f.startswith("datasheet regenerated") and f"README.md line {line} " in f
            for f in failures
        ), (m.group(), line, failures)


# -- [inputs] 6: signed packages ------------------------------------------------------


@pytest.fixture(scope="module")
def signed(tmp_path_factory, small_spec, small_frame) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("signed")
    assert main(["keygen", "--out", str(root / "steward")]) == 0
    assert (root / "steward.key").stat().st_mode & 0o077 == 0  # private to its owner
    out = _release(root, small_spec, small_frame, "--sign", str(root / "steward.key"))
    return out, root / "steward.pub"


def _rehash(root: Path) -> None:
    from synthflow.release.signing import SIGNATURE

    files = sorted(p.name for p in root.iterdir() if p.name not in ("MANIFEST.json", SIGNATURE))
    (root / "MANIFEST.json").write_text(
        json.dumps({"files": {f: sha256_file(root / f) for f in files}})
    )


def test_a_signed_release_audits_with_the_publishers_key(signed):
    release, public = signed
    report = audit_release(release, key_path=public)
    assert report.ok, report.failures
    names = [name for name, _, _ in report.checks]
    assert "signature (the reviewer's key)" in names
    fingerprint = json.loads((release / "acceptance.json").read_text())["signed_by"]
    assert fingerprint["public_key_sha256"] in (release / "README.md").read_text()


@pytest.mark.parametrize(
    "name", ["synthetic.csv", "acceptance.json", "spec.yaml", "README.md", "PUBLIC_KEY.pem"]
)
def test_any_rewrite_of_a_signed_package_fails_the_publishers_key(signed, tmp_path, name):
    release, public = signed
    root = tmp_path / "release"
    shutil.copytree(release, root)
    path = root / name
    path.write_bytes(path.read_bytes() + b"\n")  # the smallest edit
    _rehash(root)  # MANIFEST rehashed, as a careful forger would
    report = audit_release(root, key_path=public)
    assert any(f.startswith("signature (the reviewer's key)") for f in report.failures)


def test_a_forger_who_re_signs_everything_fails_only_against_the_real_key(signed, tmp_path):
    # A consistent rewrite: a changed figure, the forger's own key beside the release,
    # acceptance.json and the README naming it, MANIFEST rehashed and re-signed. Every
    # self-consistency check passes; the publisher's key does not.
    from synthflow.release import signing

    release, public = signed
    root = tmp_path / "release"
    shutil.copytree(release, root)
    assert main(["keygen", "--out", str(tmp_path / "forger")]) == 0
    forger = signing.load_private_key(tmp_path / "forger.key")
    old_fp = json.loads((root / "acceptance.json").read_text())["signed_by"]["public_key_sha256"]
    new_pem = signing.public_pem(forger)
    new_fp = signing.fingerprint(new_pem)
    (root / "PUBLIC_KEY.pem").write_bytes(new_pem)
    for name in ("acceptance.json", "README.md"):
        (root / name).write_text((root / name).read_text().replace(old_fp, new_fp))
    _rehash(root)
    (root / "SIGNATURE").write_text(signing.sign(forger, (root / "MANIFEST.json").read_bytes()))
    assert audit_release(root).ok  # consistent: only the key can tell
    report = audit_release(root, key_path=public)
    assert [f.split(":")[0] for f in report.failures] == ["signature (the reviewer's key)"]


def test_an_unsigned_package_fails_a_key(pristine, signed):
    _, public = signed
    report = audit_release(pristine, key_path=public)
    assert report.failures == ["signature (the reviewer's key): the package is not signed"]


def test_a_key_is_never_overwritten_and_a_bad_key_is_refused_before_any_charge(
    tmp_path, small_spec, small_csv, capsys
):
    (tmp_path / "k.key").write_text("mine")
    assert main(["keygen", "--out", str(tmp_path / "k")]) == 2
    assert (tmp_path / "k.key").read_text() == "mine"
    cands = tmp_path / "c.yaml"
    configurations = [c.to_json() for c in expand_space(small_spec)[:1]]
    cands.write_text(
        yaml.safe_dump({"spec_sha256": small_spec.sha256, "configurations": configurations})
    )
    argv = ["release", small_spec.path, "--data", str(small_csv), "--candidates", str(cands),
            "--out", str(tmp_path / "r"), "--private-dir", str(tmp_path / "e"),
            "--ledger", str(tmp_path / "l.jsonl"), "--sign", str(tmp_path / "k.key")]  # fmt: skip
    assert main(argv) == 2
    assert "not an unencrypted PEM private key" in capsys.readouterr().err
    assert not (tmp_path / "l.jsonl").exists() and not (tmp_path / "e").exists()
