"""Every case of ``bad_inputs.yaml`` on the real CLI: exit code, message, nothing lost."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import yaml

from synthflow.cli import main
from synthflow.space import expand_space

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CASES = yaml.safe_load((HERE / "bad_inputs.yaml").read_text())


def _content(text: str) -> bytes:
    """File bytes: ``latin1:`` encodes as Latin-1, ``gztrunc:`` gzips then cuts the end."""
    if text.startswith("latin1:"):
        return text.removeprefix("latin1:").encode("latin-1")
    if text.startswith("gztrunc:"):
        return gzip.compress(text.removeprefix("gztrunc:").encode())[:-12]
    return text.encode()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_bad_input(case, tmp_path, small_spec, small_csv, capsys):
    for name, content in (case.get("files") or {}).items():
        content = content.replace("{small_sha}", small_spec.sha256)
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_content(content))
    before = {n: (tmp_path / n).read_bytes() for n in case.get("unchanged", [])}
    spec_text = Path(small_spec.path).read_text()
    for old, new in (case.get("spec_edit") or {}).items():
        assert old in spec_text, f"spec_edit: {old!r} not in the small spec"
        spec_text = spec_text.replace(old, new)
    (tmp_path / "spec.yaml").write_text(spec_text)
    subs = {
        "tmp": str(tmp_path),
        "spec": str(tmp_path / "spec.yaml"),
        "births": str(REPO / "configs" / "births.yaml"),
        "small": small_spec.path,
        "small_csv": str(small_csv),
        "tables": str(REPO / "configs" / "tables_births.yaml"),
        "config": next(c.id for c in expand_space(small_spec) if c.model == "privbayes"),
        "config3": next(c.id for c in expand_space(small_spec) if c.min_count == 3),
    }
    argv = [str(a).format(**subs) for a in case["argv"]]
    assert main(argv) == case["exit"]
    captured = capsys.readouterr()
    assert case["message"] in captured.err, captured.err
    assert "Traceback" not in captured.err
    for name in case.get("absent", []):
        assert not (tmp_path / name).exists(), f"{name} was written"
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data, f"{name} was changed"
