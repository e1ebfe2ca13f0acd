"""#61 item 8: ``synthflow.draft_spec(df)``, the Python form of ``synthflow init``."""

from __future__ import annotations

import pandas as pd
import pytest

import synthflow
from synthflow.cli import main
from synthflow.public.wide import make_wide_table


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return make_wide_table(500, seed=3)


def _body(text: str) -> list[str]:
    """The draft without its first line (what it was drafted from) and public_sample."""
    return [x for x in text.splitlines()[1:] if "public_sample" not in x]


def test_draft_spec_on_a_frame_drafts_what_init_drafts_from_its_file(frame, tmp_path):
    csv, by_init = tmp_path / "wide.csv", tmp_path / "init.yaml"
    frame.to_csv(csv, index=False)
    argv = ["-q", "init", "--data", str(csv), "--public", "--out", str(by_init)]
    assert main([*argv, "--rows", "3000", "--name", "wide"]) == 0
    draft = synthflow.draft_spec(frame, name="wide", rows=3000)
    assert isinstance(draft, synthflow.DraftSpec)
    assert draft.text.startswith("# Release spec DRAFTED by synthflow.draft_spec from a PUBLIC")
    assert _body(draft.text) == _body(by_init.read_text())  # one drafting code
    assert draft.columns == tuple(frame.columns)
    spec = draft.spec  # loaded as a ReleaseSpec, to try before review
    assert isinstance(spec, synthflow.ReleaseSpec) and spec.name == "wide"
    assert spec.column("age").domain == (frame.age.min(), frame.age.max())


def test_write_refuses_an_existing_file_unless_force(frame, tmp_path):
    draft = synthflow.draft_spec(frame, rows=1000, domains={"age": [0, 120]})
    out = tmp_path / "spec.yaml"
    assert draft.write(out) == out
    assert main(["validate", str(out)]) == 0
    assert synthflow.load_spec(out).column("age").domain == (0, 120)
    assert "# from the codebook (domains=)" in out.read_text()
    out.write_text("mine\n")
    with pytest.raises(synthflow.ConfigError, match=r"never overwritten silently.*force=True"):
        draft.write(out)
    assert out.read_text() == "mine\n"
    draft.write(out, force=True)
    assert synthflow.load_spec(out).name == "release"


def test_a_file_draft_names_its_public_sample_relative_to_where_it_is_written(frame, tmp_path):
    data = tmp_path / "data" / "public.parquet"
    data.parent.mkdir()
    frame.to_parquet(data)
    draft = synthflow.draft_spec(data, rows=1000)
    (tmp_path / "specs").mkdir()
    out = draft.write(tmp_path / "specs" / "s.yaml")
    assert 'public_sample: "../data/public.parquet"' in out.read_text()
    assert synthflow.load_spec(out).public_sample == "../data/public.parquet"


def test_bad_input_is_refused_with_the_fix(frame):
    with pytest.raises(synthflow.ConfigError, match=r"\['nope'\] are not columns"):
        synthflow.draft_spec(frame, domains={"nope": [0, 1]})
    with pytest.raises(synthflow.DataError, match="no rows"):
        synthflow.draft_spec(frame.iloc[:0])
