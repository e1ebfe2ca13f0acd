"""Ledger gaps left by the second mutation run (benchmarks/mutmut_rerun_ledger_generators.md).

Every refusal of a ledger file names the file and the line it refuses (the module
docstring: an edited line "is detected and named"), for every kind of damage, not only
the edited charge lines tests/unit/privacy/test_ledger.py covers; a line that ``json`` refuses
with a plain ValueError is still reported as damage; the file is read as UTF-8 whatever
the process's locale; and a charge given no mechanism records none.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from synthflow.errors import ConfigError
from synthflow.privacy.ledger import Ledger

_HEADER = {
    "header": "synthflow dataset ledger",
    "dataset_sha256": "a" * 64,
    "fingerprint": "cleaned-rows-v1",
    "total_epsilon": 1.0,
    "total_delta": 0.0,
}


def _line(obj: dict) -> str:
    return json.dumps(obj) + "\n"


@pytest.mark.parametrize(
    ("text", "lineno"),
    [
        (_line({**_HEADER, "extra": 1}), 1),  # unknown header field
        (_line({**_HEADER, "dataset_sha256": "abc"}), 1),  # not a SHA-256
        (_line({**_HEADER, "total_epsilon": -1.0}), 1),  # not a valid budget
        (_line(_HEADER) + _line(_HEADER), 2),  # a dataset header after the first line
        (_line({"what": "x", "epsilon": 0.1}), 1),  # no 'prev' hash
        (_line({"what": "x", "epsilon": 0.1, "prev": None}) + "{oops\n", 2),  # not JSON
        (_line({"what": "x", "epsilon": 0.1, "prev": None}) + "[1, 2]\n", 2),  # not an object
        (_line({"what": "x", "epsilon": 0.1, "prev": None}) + '{"what": "y", "ep', 2),  # torn
    ],
    ids=[
        "header-field",
        "header-sha",
        "header-budget",
        "second-header",
        "no-prev",
        "not-json",
        "not-object",
        "torn",
    ],
)
def test_every_refusal_names_the_file_and_the_line(tmp_path, text, lineno):
    path = tmp_path / "ledger.jsonl"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        Ledger(total_epsilon=1.0, path=path)
    assert re.match(rf"{re.escape(str(path))}:{lineno}\b", str(info.value)), str(info.value)


def test_a_line_json_refuses_with_a_plain_value_error_is_damage(tmp_path):
    # A 5000-digit integer: json.loads raises ValueError (Python's limit on int digits),
    # not JSONDecodeError; the ledger must still refuse the line as damaged.
    path = tmp_path / "ledger.jsonl"
    path.write_text('{"what": "x", "epsilon": ' + "1" * 5000 + ', "prev": null}\n')
    with pytest.raises(ConfigError) as info:
        Ledger(total_epsilon=1.0, path=path)
    assert str(info.value).startswith(f"{path}:1 ")


_READ = """
import sys
from synthflow.privacy.ledger import Ledger
ledger = Ledger(total_epsilon=1.0, path=sys.argv[1])
print("ok" if ledger.charges[0].what == "M\\u00fctter" else "wrong")
"""


def test_a_ledger_file_is_read_as_utf8_whatever_the_locale(tmp_path):
    # A hand-written line with raw UTF-8 (valid JSON), read by a process whose locale
    # encoding is ASCII (C locale, no UTF-8 mode, no locale coercion).
    path = tmp_path / "ledger.jsonl"
    line = json.dumps({"what": "Mütter", "epsilon": 0.1, "prev": None}, ensure_ascii=False)
    path.write_bytes((line + "\n").encode("utf-8"))
    assert Ledger(total_epsilon=1.0, path=path).charges[0].what == "Mütter"  # this process
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    out = subprocess.run(
        [sys.executable, "-c", _READ, str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


def test_a_charge_given_no_mechanism_records_none(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(total_epsilon=1.0, path=path)
    ledger.charge("x", epsilon=0.1)
    assert ledger.charges[0].mechanism == ""
    assert json.loads(path.read_text())["mechanism"] == ""
