"""The datasheet for births and for the affairs survey: every section, no private number."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from synthflow.acceptance import evaluate
from synthflow.acceptance.noise_check import noise_figures, public_sample
from synthflow.config import ReleaseSpec
from synthflow.data import load_data
from synthflow.flow import run_flow
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.release._datasheet import _plural, render_datasheet
from synthflow.release.cost import selection_cost
from synthflow.space import expand_space

SECTIONS = (
    "## Motivation",
    "## Composition: the codebook",
    "## Collection: where the data come from",
    "## Preprocessing",
    "## Quality checks (acceptance criteria)",
    "## Privacy",
    "## Disclosure risk of the released file",
    "## Uses and misuses",
    "## Distribution",
    "## Maintenance",
)


def _release(spec: ReleaseSpec, raw: pd.DataFrame, model: str) -> tuple[str, dict, object]:
    """A DP flow and a DP evaluation on data standing in for private data."""
    cfg = next(c for c in expand_space(spec) if c.model == model)
    rng = PrivacyRNG.from_seed(3)
    ledger = Ledger(total_epsilon=spec.privacy.total_epsilon)
    result = run_flow(spec, cfg, raw, ledger=ledger, rng=rng, public=True, show_progress=False)
    report = evaluate(
        spec, result.transformer, result.original, result.candidate, exact=False,
        ledger=ledger, rng=rng,
    )  # fmt: skip
    exact = evaluate(spec, result.transformer, result.original, result.candidate, exact=True)
    # The one noise rule's figures at the release's size, as write_release passes them.
    figures = noise_figures(spec, result.transformer, len(result.candidate), public_sample(spec))
    text = render_datasheet(
        spec=spec,
        configuration=cfg,
        transformer=result.transformer,
        candidate=result.candidate,
        report=report,
        cost=selection_cost(spec, fit_once=False),
        projection_rows=result.projection_rows,
        note="A test release.",
        noise=figures,
    )
    private = {
        "exact criterion values": {f"{c.value:.4g}" for c in exact.criteria if c.value != 0},
    }
    # 1-way counts of the original (D_T) that the candidate does not share.
    t, r = result.original, result.candidate
    for col in t.columns:
        ct, cr = t[col].value_counts(), r[col].value_counts()
        private.setdefault("original counts", set()).update(
            f"{v:,}" for k, v in ct.items() if v > 20 and cr.get(k) != v
        )
    return text, private, report


def _check(text: str, private: dict, report, spec: ReleaseSpec) -> None:
    for section in SECTIONS:
        assert section in text, section
    # one codebook row per column, with its description when the spec gives one
    for c in spec.columns:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{c.name}` |"))
        assert f"`{c.transformations[0].bins[0].label}`" in row  # its released values
        if c.description:
            assert c.description in row
    assert "<built-in" not in text and "{'" not in text and "None" not in text  # no reprs
    # every criterion: meaning, released value, noise and a verdict
    for c in report.criteria:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{c.name}` |"))
        assert f"{c.value:.4g}" in row and ("passed" in row or "failed" in row)
        assert row.count("|") == 8  # 7 columns
    assert "replaced by copies of other records" in text  # the projection's row count
    assert "sample uniques" in text and "k-anonymity level" in text
    keys = spec.disclosure.key_variables
    assert ", ".join(f"`{k}`" for k in keys) in text
    assert "A test release." in text
    # No number computed from the original appears (only DP values and public facts).
    # Percentages are left out: they are the noise rule's simulated pass probabilities
    # and the projection's share (public), and "90%" must not match an original count.
    words = set(re.findall(r"[0-9][0-9.,e+-]*[0-9](?![0-9%])", text))
    for what, numbers in private.items():
        dp_values = {f"{c.value:.4g}" for c in report.criteria}
        leaked = (numbers - dp_values) & words
        assert not leaked, f"{what} in the datasheet: {sorted(leaked)[:5]}"


def test_births_datasheet(births_spec, nvss_10k):
    raw = load_data(nvss_10k, births_spec, public=True).frame
    text, private, report = _release(births_spec, raw, "privbayes")
    _check(text, private, report, births_spec)
    assert "Live births in Israel, 2014" in text and "Hod, S. and Canetti" in text
    assert "grams" in text  # units in the codebook
    assert "| column | meaning | unit | released values |" in text
    assert "l-diversity of `birth_weight`" in text
    # #61 item 9: an l-diversity of 1 is explained, not shown without a word
    l_row = next(x for x in text.splitlines() if x.startswith("| l-diversity of"))
    assert l_row.split("|")[2].strip() == "1"  # this seeded release's value
    assert "An l-diversity of 1 means that in some group of records" in text
    # The regression's noise is on the fit's statistics: its effect on the value is
    # simulated on the spec's public sample at the release's size and said in words; at
    # 10K rows a perfect candidate would rarely pass it, so it is flagged.
    assert "Re-drawing that noise on the spec's public sample" in text
    row = next(x for x in text.splitlines() if x.startswith("| `regression_coef_error` |"))
    assert "decided mostly by noise" in row
    # #61 item 9: the "noise sd" column holds no simulated median value (once -0.01041)
    cells = [c.strip() for c in row.split("|")]
    header = next(x for x in text.splitlines() if "| noise sd |" in x)
    assert cells[[c.strip() for c in header.split("|")].index("noise sd")] == (
        "in the fit (see below)"
    )
    assert "(simulated median)" not in text


def test_affairs_datasheet(tmp_path):
    pytest.importorskip("statsmodels")
    from synthflow.public.affairs import write_affairs

    spec = load_spec("affairs")
    _, private_csv = write_affairs(tmp_path)
    raw = load_data(private_csv, spec, public=True).frame
    text, private, report = _release(spec, raw, "privbayes")
    _check(text, private, report, spec)
    assert "Fair, R. C. (1978)" in text


def test_missing_provenance_is_said_once(small_spec, small_csv):
    raw = load_data(small_csv, small_spec, public=True).frame
    text, _, _ = _release(small_spec, raw, "privbayes")
    # one line lists every missing field, instead of "not stated" in every section
    assert text.lower().count("not stated in the spec") == 1
    line = next(x for x in text.splitlines() if "Not stated in the spec" in x)
    for field in ("motivation", "source", "population", "period", "licence", "maintenance"):
        assert field in line, field
    assert "- Licence:" not in text and "- Source:" not in text
    # No column states a meaning or a unit: the codebook has no column of "-" for them
    assert "| column | released values |" in text
    assert not any(x.startswith("| `") and "| - |" in x for x in text.splitlines())
    # English plurals: "1 rule", never "1 rules"
    assert not re.search(r"\b1 rules\b", text)
    n = len(small_spec.raw_constraints)
    assert f"({_plural(n, 'rule')} in `spec.yaml`" in text
    assert "record's record" not in text


@pytest.mark.parametrize(
    ("n", "text"), [(0, "0 rules"), (1, "1 rule"), (2, "2 rules"), (1200, "1,200 rules")]
)
def test_plural(n, text):
    assert _plural(n, "rule") == text
