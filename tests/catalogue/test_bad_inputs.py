"""Every case of ``bad_inputs.yaml`` on the real CLI: exit code, message, nothing lost."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path

import pandas as pd
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


CANARY = "CANARY-5b1e0c7d"
"""Planted in a column of the private file that no spec reads: it must never be printed."""


def _generated(text: str) -> bytes | None:  # noqa: PLR0911  (one per hostile file)
    """Hostile files made here: ``gen:NAME`` (see the catalogue's header)."""
    small = (REPO / "configs" / "example_small.yaml").read_text()
    if text == "gen:alias-bomb":  # 9 levels of 9 aliases: 9^9 values once expanded
        lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        for i in range(1, 10):
            prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
            lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        return ("\n".join(lines) + "\n").encode()
    if text == "gen:deep":
        return ("a: " + "[" * 50_000 + "]" * 50_000 + "\n").encode()
    if text == "gen:huge-range":
        return small.replace(
            'b: ["<18", {from: 18, to: 87, width: 10}, ">87"]',
            'b: ["<18", {from: 18, to: 999999999999, width: 1}]',
        ).encode()
    if text == "gen:million-categories":
        cats = ", ".join(f"c{i}" for i in range(1_000_000))
        return small.replace(
            "categories: [north, south, east, west]", f"categories: [{cats}]"
        ).encode()
    if text == "gen:401-digits":
        return small.replace("total_epsilon: 5.0", "total_epsilon: 1" + "0" * 400).encode()
    if text == "gen:10mb-value":
        return small.replace("description: Made-up", "description: " + "x" * 10_000_000).encode()
    return None


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_bad_input(case, tmp_path, small_spec, births_spec, small_csv, capsys, caplog):  # noqa: PLR0917
    # The private file carries a canary in a column no spec reads (and is large enough to
    # matter when echoed); every message is checked for it below.
    frame = pd.read_csv(small_csv)
    frame.assign(note=CANARY).to_csv(small_csv, index=False)
    for name, content in (case.get("files") or {}).items():
        content = content.replace("{small_sha}", small_spec.sha256)
        content = content.replace("CONFIG", next(c.id for c in expand_space(small_spec)))
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        generated = _generated(content)
        path.write_bytes(generated if generated is not None else _content(content))
    if case.get("fifo"):
        os.mkfifo(tmp_path / case["fifo"])
    before = {n: (tmp_path / n).read_bytes() for n in case.get("unchanged", [])}
    spec_text = Path(small_spec.path).read_text()
    for old, new in (case.get("spec_edit") or {}).items():
        assert old in spec_text, f"spec_edit: {old!r} not in the small spec"
        spec_text = spec_text.replace(old, new)
    (tmp_path / "spec.yaml").write_text(spec_text)
    subs = {
        "tmp": str(tmp_path),
        "spec": str(tmp_path / "spec.yaml"),
        "births": str(REPO / "configs" / "births-2024.yaml"),
        "small": small_spec.path,
        "small_csv": str(small_csv),
        "tables": str(REPO / "configs" / "tables_births.yaml"),
        "config": next(c.id for c in expand_space(small_spec) if c.model == "privbayes"),
        "config3": next(c.id for c in expand_space(small_spec) if c.min_count == 3),
        "births_config": expand_space(births_spec)[0].id,
    }
    argv = [str(a).format(**subs) for a in case["argv"]]
    start = time.process_time()
    assert main(argv) == case["exit"]
    seconds = time.process_time() - start
    captured = capsys.readouterr()
    assert case["message"] in captured.err, captured.err
    assert "Traceback" not in captured.err
    everything = captured.out + captured.err + caplog.text
    assert CANARY not in everything, "a value of the private file was printed"
    if case.get("refused_spec"):  # a hostile spec is refused quickly (CPU seconds)
        assert seconds < 2.0, f"took {seconds:.1f} s of CPU"
        assert captured.err.count("\n") <= 1  # one line
    for name in case.get("absent", []):
        assert not (tmp_path / name).exists(), f"{name} was written"
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data, f"{name} was changed"


_MEASURE = """
import sys
from synthflow.cli import main
code = main(sys.argv[1:])
# VmHWM: this process image's peak (ru_maxrss would also count the copy of the forking
# pytest worker, whatever that worker had grown to before the exec).
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(code, int(peak.split()[1]))
"""


@pytest.mark.parametrize("case", [c for c in CASES if c.get("refused_spec")], ids=lambda c: c["id"])
def test_a_hostile_spec_is_refused_within_1_gb(case, tmp_path):
    # The refusal's peak memory, in a process of its own (VmHWM in KiB on Linux):
    # the alias bomb reached 2.2 GB and the trillion-bin range 7.8 GB before the limits.
    import subprocess
    import sys

    for name, content in (case.get("files") or {}).items():
        generated = _generated(content)
        (tmp_path / name).write_bytes(generated if generated is not None else _content(content))
    (tmp_path / "data.csv").write_text("age,visits,region,smoker\n30,2,north,no\n")
    subs = {"tmp": str(tmp_path), "small_csv": str(tmp_path / "data.csv")}
    argv = [str(a).format(**subs) for a in case["argv"]]
    out = subprocess.run([sys.executable, "-c", _MEASURE, *argv], capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    code, peak_kib = map(int, out.stdout.split()[-2:])
    assert code == case["exit"]
    assert peak_kib < 1024 * 1024, f"peak {peak_kib / 1024:.0f} MiB"
