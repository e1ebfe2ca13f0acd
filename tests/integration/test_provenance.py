"""A bundled spec's provenance cannot be published for other data unnoticed; the audit
warns of placeholders (#38 item 3)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import yaml

from synthflow.cli import main
from synthflow.loader import load_datasheet
from synthflow.release import audit_release
from synthflow.release.publish import sha256_file
from synthflow.space import expand_space

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "docs" / "datasheet-template.yaml"


def _release(tmp_path: Path, spec, spec_path, data: Path, *extra: str) -> tuple[int, Path]:
    cands = tmp_path / "candidates.yaml"
    configs = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configs}))
    out = tmp_path / "release"
    code = main(["release", str(spec_path), "--data", str(data), "--candidates", str(cands),
                 "--out", str(out), "--private-dir", str(tmp_path / "enclave"), "--seed", "3",
                 "--public", "--quiet", "--max-attempts", "200", *extra])  # fmt: skip
    return code, out


def test_a_bundled_spec_publishes_its_provenance_only_under_a_warning(
    tmp_path, small_spec, small_csv, capsys
):
    # A copy of the bundled file elsewhere is the same spec (its hash).
    copy = tmp_path / "my_spec.yaml"
    shutil.copyfile(small_spec.path, copy)
    code, out = _release(tmp_path, small_spec, copy, small_csv)
    assert code == 0
    err = capsys.readouterr().err
    # The spec states no provenance field: the warning claims to copy none (it once
    # listed title, source, population, period and publisher above "Not stated: ...").
    assert "warning: This release was made with synthflow's bundled spec 'example_small'" in err
    assert "The provenance below" not in err
    readme = (out / "README.md").read_text()
    assert "> **Provenance not confirmed.**" in readme.split("\n\n")[1]  # right under the title
    acc = json.loads((out / "acceptance.json").read_text())
    assert "bundled spec 'example_small'" in acc["provenance_warning"]
    report = audit_release(out)
    assert report.ok, report.failures
    assert any(w.startswith("provenance not confirmed") for w in report.warnings)
    assert "datasheet placeholder: licence: not stated" in report.warnings
    main(["audit", str(out)])
    assert "WARN  provenance not confirmed" in capsys.readouterr().out


def test_a_datasheet_file_replaces_the_provenance_and_the_audit_checks_it(
    tmp_path, small_spec, small_csv, capsys
):
    filled = yaml.safe_load(TEMPLATE.read_text())
    filled.update(title="Test births 2019", source="a test file", licence="CC BY 4.0")
    sheet = tmp_path / "datasheet.yaml"
    sheet.write_text(yaml.safe_dump(filled))
    code, out = _release(
        tmp_path, small_spec, small_spec.path, small_csv, "--datasheet", str(sheet)
    )
    assert code == 0
    assert "Provenance" not in capsys.readouterr().err
    readme = (out / "README.md").read_text()
    assert readme.startswith("# Test births 2019") and "Provenance not confirmed" not in readme
    assert "- Source: a test file" in readme and "- Licence: CC BY 4.0" in readme
    report = audit_release(out)
    assert report.ok, report.failures
    # the template's other fields are still its <...> placeholders: warned, not failed
    assert "datasheet placeholder: licence: 'CC BY 4.0'" not in report.warnings
    assert any(w.startswith("datasheet placeholder: publisher: '<") for w in report.warnings)
    # The replaced provenance is part of what the audit regenerates: an edit fails it.
    acc = json.loads((out / "acceptance.json").read_text())
    acc["datasheet"]["source"] = "another file"
    (out / "acceptance.json").write_text(json.dumps(acc))
    files = sorted(p.name for p in out.iterdir() if p.name != "MANIFEST.json")
    (out / "MANIFEST.json").write_text(
        json.dumps({"files": {f: sha256_file(out / f) for f in files}})
    )
    assert any("datasheet regenerated" in f for f in audit_release(out).failures)


def test_a_bad_datasheet_file_is_refused_before_anything_is_spent(
    tmp_path, small_spec, small_csv, capsys
):
    sheet = tmp_path / "datasheet.yaml"
    sheet.write_text("title: x\nsoucre: a typo\n")
    code, _ = _release(tmp_path, small_spec, small_spec.path, small_csv, "--datasheet", str(sheet))
    assert code == 2
    assert "soucre" in capsys.readouterr().err
    assert not (tmp_path / "enclave").exists()


def test_the_template_is_a_valid_datasheet_file():
    ds = load_datasheet(TEMPLATE)
    assert ds.title.startswith("<") and ds.source.startswith("<")
    with pytest.raises(Exception, match="does not exist"):
        load_datasheet(TEMPLATE.with_name("nope.yaml"))


def test_the_warning_names_only_the_fields_the_bundled_spec_states(births_spec, small_spec):
    from synthflow.release._datasheet import provenance_warning

    births = provenance_warning("births", births_spec.datasheet)
    stated = [f for f in ("title", "source", "population", "period", "publisher")
              if getattr(births_spec.datasheet, f)]  # fmt: skip
    assert len(stated) >= 3 and f"The provenance below ({', '.join(stated)})" in births
    partial = dataclasses.replace(births_spec.datasheet, population="", period="")
    text = provenance_warning("births", partial)
    assert "population" not in text.split(")")[0] and "period" not in text.split(")")[0]
    assert "The provenance below" not in provenance_warning("example_small", small_spec.datasheet)


def test_the_audit_accepts_an_older_packages_wording(small_spec):
    """Packages published before the wording changed still audit (same warning, old words)."""
    from synthflow.release._datasheet import legacy_provenance_warning
    from synthflow.release.audit import AuditReport, _provenance_warnings

    old = legacy_provenance_warning("example_small", small_spec.datasheet.source)
    report = AuditReport()
    _provenance_warnings(report, small_spec, old, replaced=False)
    assert report.ok, report.checks
    report = AuditReport()
    _provenance_warnings(report, small_spec, old.replace("bundled", "shipped"), replaced=False)
    assert not report.ok  # any other text is not the warning


def test_a_spec_derived_from_a_bundled_one_keeps_its_warning(tmp_path, small_csv, capsys):
    # [ux] 1: a spec written by 'plan' (a bundled spec with other budgets) lost the
    # warning: its datasheet said "Live births in Israel, 2014 ... Israel Ministry of
    # Health" for other data, and the audit passed. Provenance follows the content.
    from synthflow.loader import load_spec
    from synthflow.release._datasheet import bundled_provenance_of

    births = yaml.safe_load((REPO / "configs" / "births-2024.yaml").read_text())
    planned = dict(births, privacy={**births["privacy"], "generator_epsilon": 1.0})
    path = tmp_path / "planned.yaml"
    path.write_text(yaml.safe_dump(planned, sort_keys=False))
    assert bundled_provenance_of(load_spec(path)) == "births"
    # Here on the small table: the example spec carrying births' datasheet, as a copy
    # that keeps the provenance keys would.
    small = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
    small["datasheet"] = births["datasheet"]
    derived = tmp_path / "derived.yaml"
    derived.write_text(yaml.safe_dump(small, sort_keys=False))
    spec = load_spec(derived)
    code, out = _release(tmp_path, spec, derived, small_csv)
    assert code == 0
    assert "bundled spec 'births'" in capsys.readouterr().err
    acc = json.loads((out / "acceptance.json").read_text())
    assert "bundled spec 'births'" in acc["provenance_warning"]
    assert audit_release(out).ok
    # Without the warning the package fails the audit.
    warning = acc.pop("provenance_warning")
    (out / "acceptance.json").write_text(json.dumps(acc))
    readme = (out / "README.md").read_text().replace(warning, "")
    (out / "README.md").write_text(readme)
    report = audit_release(out)
    assert not report.ok
    assert any(f.startswith("provenance warning") for f in report.failures), report.failures
    # A spec with a datasheet of its own is not derived.
    small["datasheet"] = {"title": "Clinic visits 2025", "publisher": "A clinic"}
    derived.write_text(yaml.safe_dump(small, sort_keys=False))
    assert bundled_provenance_of(load_spec(derived)) is None


def test_the_audit_accepts_the_wording_that_named_a_second_release(small_spec):
    """Packages of 2026-11-26 to 2026-12-04 said 'synthflow release --datasheet FILE'."""
    from synthflow.release._datasheet import earlier_provenance_warnings, provenance_warning
    from synthflow.release.audit import AuditReport, _provenance_warnings

    now = provenance_warning("example_small", small_spec.datasheet)
    assert "synthflow datasheet RELEASE_DIR" in now and "nothing charged" in now
    before = earlier_provenance_warnings("example_small", small_spec.datasheet)[0]
    assert "synthflow release --datasheet FILE" in before and before != now
    for text in (now, before):
        report = AuditReport()
        _provenance_warnings(report, small_spec, text, replaced=False)
        assert report.ok, report.checks


def _tree(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): sha256_file(p) for p in sorted(path.rglob("*"))
            if p.is_file()}  # fmt: skip


def test_replacing_the_provenance_comes_first_and_charges_nothing(
    tmp_path, small_spec, small_csv, capsys
):
    """#61 item 7: the receipt and the audit say first to confirm or replace the
    provenance, and 'synthflow datasheet' re-renders the package with nothing charged."""
    copy = tmp_path / "my_spec.yaml"
    shutil.copyfile(small_spec.path, copy)
    code, out = _release(tmp_path, small_spec, copy, small_csv)
    assert code == 0
    receipt = capsys.readouterr().err.splitlines()  # the receipt is said on stderr
    at = next(i for i, line in enumerate(receipt) if "release: released:" in line)
    assert receipt[at + 1].strip().startswith("FIRST  confirm or replace the provenance")
    assert f"synthflow datasheet {out.resolve()} --datasheet FILE" in receipt[at + 1]
    assert main(["audit", str(out)]) == 0
    assert capsys.readouterr().out.startswith("FIRST  confirm or replace the provenance")

    filled = yaml.safe_load(TEMPLATE.read_text())
    filled.update(title="Test births 2019", source="a test file", period=2019)
    sheet = tmp_path / "datasheet.yaml"
    sheet.write_text(yaml.safe_dump(filled))
    before = {p: _tree(p) for p in (out, tmp_path / "enclave")}
    new = tmp_path / "confirmed"
    assert main(["datasheet", str(out), "--datasheet", str(sheet), "--out", str(new)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("nothing charged:") and "audit of the new package: passed" in said
    # nothing of the original package or of the enclave (its ledger) changed
    assert {p: _tree(p) for p in before} == before
    readme = (new / "README.md").read_text()
    assert readme.startswith("# Test births 2019") and "Provenance not confirmed" not in readme
    assert "- Period: 2019" in readme
    assert "provenance_warning" not in json.loads((new / "acceptance.json").read_text())
    report = audit_release(new)
    assert report.ok, report.failures
    assert not any(w.startswith("provenance not confirmed") for w in report.warnings)
    main(["audit", str(new)])
    assert not capsys.readouterr().out.startswith("FIRST")
    # the same --out again: refused, the re-rendered package left as it is
    kept = _tree(new)
    assert main(["datasheet", str(out), "--datasheet", str(sheet), "--out", str(new)]) == 2
    assert "never overwritten" in capsys.readouterr().err
    assert _tree(new) == kept
    # an edited package is not laundered into one that passes its audit
    edited = tmp_path / "edited"
    shutil.copytree(out, edited)
    readme_path = edited / "README.md"
    readme_path.write_text(readme_path.read_text().replace("synthetic", "real", 1))
    assert main(["datasheet", str(edited), "--datasheet", str(sheet), "--out",
                 str(tmp_path / "x")]) == 2  # fmt: skip
    assert "fails its own audit" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / ".x.partial").exists()


def test_a_signed_package_is_re_rendered_only_with_a_key(tmp_path, small_spec, small_csv, capsys):
    pytest.importorskip("cryptography")
    assert main(["keygen", "--out", str(tmp_path / "steward")]) == 0
    code, out = _release(tmp_path, small_spec, small_spec.path, small_csv, "--sign",
                         str(tmp_path / "steward.key"))  # fmt: skip
    assert code == 0
    sheet = tmp_path / "datasheet.yaml"
    sheet.write_text(yaml.safe_dump({"title": "Signed births", "source": "a test file"}))
    new = tmp_path / "confirmed"
    capsys.readouterr()
    assert main(["datasheet", str(out), "--datasheet", str(sheet), "--out", str(new)]) == 2
    assert "is signed" in capsys.readouterr().err and not new.exists()
    assert main(["datasheet", str(out), "--datasheet", str(sheet), "--out", str(new),
                 "--sign", str(tmp_path / "steward.key")]) == 0  # fmt: skip
    report = audit_release(new, key_path=tmp_path / "steward.pub")
    assert report.ok, report.failures
    assert (new / "README.md").read_text().startswith("# Signed births")
