"""[inputs] Fuzzing the real CLI with mutated specs and data (hypothesis).

Every outcome is exit 0, 1 or 2 with a one-line message on refusal, never a traceback,
never a value of the data file; a refused spec costs under 2 CPU seconds.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthflow.cli import main

REPO = Path(__file__).resolve().parents[2]
SMALL = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
CANARY = "CANARY-9d2f"

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.lists(st.one_of(st.integers(-5, 100), st.text(max_size=5)), max_size=5),
    st.dictionaries(st.text(max_size=8), st.integers(-3, 3), max_size=3),
)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


PATHS = [p for p in _paths(SMALL) if p]


@st.composite
def mutated_specs(draw):
    spec = copy.deepcopy(SMALL)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = spec
        try:
            for key in path[:-1]:
                parent = parent[key]
            action = draw(st.sampled_from(["replace", "delete", "add"]))
            if action == "replace":
                parent[path[-1]] = draw(JUNK)
            elif action == "delete":
                del parent[path[-1]]
            elif isinstance(parent, dict):
                parent[draw(st.text(min_size=1, max_size=8))] = draw(JUNK)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed the path
    return spec


def _one_line_refusal(code: int, err: str) -> None:
    assert code in (0, 1, 2), code
    assert "Traceback" not in err
    if code == 2:
        lines = [x for x in err.splitlines() if x.strip()]
        assert len(lines) == 1 and lines[0].startswith("synthflow "), err


@given(spec=mutated_specs())
@settings(
    max_examples=120, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
def test_mutated_specs_are_refused_cleanly(tmp_path_factory, spec):
    path = tmp_path_factory.mktemp("spec") / "spec.yaml"
    try:
        path.write_text(yaml.safe_dump(spec, allow_unicode=True))
    except (yaml.YAMLError, UnicodeEncodeError):
        return
    out = tmp_path_factory.mktemp("o") / "space.json"
    start = time.process_time()
    with pytest.MonkeyPatch.context():
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["space", str(path), "--json", str(out)])
    _one_line_refusal(code, err.getvalue())
    assert time.process_time() - start < 2.0


CELLS = st.one_of(
    st.just(""),
    st.just("NA"),
    st.text(max_size=6),
    st.integers(-(10**12), 10**12).map(str),
    st.floats(allow_nan=True).map(str),
    st.just(CANARY),
)


@given(
    edits=st.lists(
        st.tuples(
            st.integers(0, 39), st.sampled_from(["age", "visits", "region", "smoker"]), CELLS
        ),
        max_size=4,
    ),
    drop_column=st.one_of(st.none(), st.sampled_from(["age", "visits", "region", "smoker"])),
    truncate=st.booleans(),
)
@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_mutated_private_data_is_refused_cleanly(  # noqa: PLR0917  (fixtures + draws)
    tmp_path_factory, small_spec, small_frame, edits, drop_column, truncate
):
    root = tmp_path_factory.mktemp("data")
    frame = small_frame.head(40).astype(object).assign(note=CANARY)
    for row, col, value in edits:
        frame.loc[row, col] = value
    if drop_column:
        frame = frame.drop(columns=[drop_column])
    text = frame.to_csv(index=False)
    if truncate:
        text = text[: len(text) * 2 // 3]  # a cut last line
    data = root / "private.csv"
    data.write_text(text)
    import contextlib
    import io

    err, out = io.StringIO(), io.StringIO()
    config = "privbayes-443433912b"
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(["run", small_spec.path, "--data", str(data), "--config", config,
                     "--out", str(root / "r"), "--ledger", str(root / "l.jsonl"),
                     "--quiet"])  # fmt: skip
    _one_line_refusal(code, err.getvalue())
    assert CANARY not in err.getvalue() + out.getvalue()
    if code == 2:  # refused: nothing was spent
        assert not (root / "l.jsonl").exists() or "epsilon" not in (root / "l.jsonl").read_text()


def test_the_canary_is_in_the_data_the_fuzzer_writes(small_frame):
    assert CANARY in small_frame.head(2).astype(object).assign(note=CANARY).to_csv()
    assert isinstance(small_frame, pd.DataFrame)
