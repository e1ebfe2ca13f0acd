"""The spec's ``public_sample``: public data like the private data, read once per process.

The noise figures, the release's pre-flight and the weighted regression fit
(``noise_weights: public_sample``) read it; it must never hold the private rows
(:func:`check_public_sample_is_public`, run before anything is charged).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from synthflow.data import load_data
from synthflow.errors import ConfigError
from synthflow.resources import is_bundled_public_data, public_data_file

if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec
    from synthflow.transform import Transformer

__all__ = [
    "chance_shared_rows",
    "check_public_sample_is_public",
    "public_sample",
    "public_sample_path",
    "shared_rows",
]


def public_sample_path(spec: ReleaseSpec) -> Path | None:
    """Where the spec's ``public_sample`` is (None if it names none), without reading it.

    Raises:
        ConfigError: If the named file is neither beside the spec nor bundled.
    """
    if not spec.public_sample:
        return None
    beside = Path(spec.path).parent / spec.public_sample
    if beside.is_file():
        return beside
    try:
        return public_data_file(spec.public_sample)
    except ConfigError:
        raise ConfigError(
            f"the spec's public_sample {spec.public_sample!r} is neither beside the spec "
            f"({str(beside)!r}) nor a bundled public data file: put the file there or fix "
            "public_sample"
        ) from None


_SAMPLES: dict[tuple[str, int, int, int], pd.DataFrame] = {}
"""Cleaned public samples read so far, by file (path, size, mtime) and the spec's columns
and raw constraints (what reading and cleaning depend on)."""


def public_sample(spec: ReleaseSpec) -> pd.DataFrame | None:
    """The spec's ``public_sample``, cleaned (None if it names none; :func:`public_sample_path`).

    Read once per process and file (the noise figures, the pre-flight and the weighted
    regression fit all read it); the caller gets a copy.
    """
    path = public_sample_path(spec)
    if path is None:
        return None
    st = path.stat()
    cleaning = hash((spec.columns, spec.raw_constraints))
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, cleaning)
    if key not in _SAMPLES:
        if len(_SAMPLES) >= 4:
            _SAMPLES.clear()
        _SAMPLES[key] = load_data(path, spec, public=True).frame
    return _SAMPLES[key].copy()


def _row_keys(frame: pd.DataFrame) -> np.ndarray:
    """A hash per row, the same for equal values whatever their dtype (3500 and 3500.0)."""
    canonical = pd.DataFrame(
        {
            c: frame[c].astype("float64").astype(str)
            if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
            else frame[c].astype(str)
            for c in frame.columns
        }
    )
    return pd.util.hash_pandas_object(canonical, index=False).to_numpy()


def shared_rows(sample: pd.DataFrame, reference: pd.DataFrame) -> float:
    """Share of ``sample``'s rows that are also rows of ``reference`` (as multisets, 0-1).

    A row counts as often as it occurs in both: ``sum_x min(count_sample(x),
    count_reference(x)) / len(sample)`` over distinct rows x of the shared columns.
    """
    cols = [c for c in sample.columns if c in reference.columns]
    if not len(sample) or not cols:
        return 0.0
    ka, ca = np.unique(_row_keys(sample[cols]), return_counts=True)
    kb, cb = np.unique(_row_keys(reference[cols]), return_counts=True)
    _, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    return float(np.minimum(ca[ia], cb[ib]).sum() / len(sample))


def chance_shared_rows(reference: pd.DataFrame) -> float:
    """The share of an independent sample's rows that ``reference`` holds by chance.

    Two halves of ``reference`` (a fixed permutation of its rows) share some rows without
    copying; a chance match being about as likely per reference row while matches are
    rare, the whole file holds about twice that share of another sample of its
    population, whatever that sample's size (at most 1). On births' distinctive rows
    (weights in grams) the NVSS 158.5K-row sample predicts 0.052 for the embedded
    167K-row file, which it shares 0.046 of; a table of a few coarse columns gets 1. Read
    from the reference (the private file) rather than the sample, so that a sample's own
    duplicates (a resample of the private rows) cannot raise it.
    """
    order = np.random.default_rng(0).permutation(len(reference))  # a fixed split, not noise
    half = len(reference) // 2
    if half == 0:
        return 1.0
    return min(1.0, 2 * shared_rows(reference.iloc[order[:half]], reference.iloc[order[half:]]))


SUBSET_SHARE = 0.98
"""A public sample this much of which are private rows, where chance gives at most half, is
a copy of part of the private file."""
MIXED_FLOOR = 0.1
"""... and one at least this much of which, and twice chance plus 0.05, holds the private
rows mixed with others (the private year pooled with up to about eight others)."""


def check_public_sample_is_public(
    spec: ReleaseSpec,
    private: pd.DataFrame,
    transformers: Sequence[Transformer] = (),
) -> None:
    """Refuse a spec whose ``public_sample`` holds the private rows (``private``, cleaned).

    The noise figures and the weighted regression fit's weights are computed from the
    public sample and published without a charge: a public sample made of private rows
    would publish statistics of them. Refused, by content (the cleaned rows, whatever
    the file's name, path, order, compression or number types), both as read and as the
    release reads them (binned by each of ``transformers``: private rows with each value
    redrawn inside its bin give the same published figures):

    * the same rows (:func:`synthflow.privacy.ledger.data_fingerprint`), even when the spec says
      ``public_sample_published: true`` (a published extract is never the whole file);
    * a part of them: at least :data:`SUBSET_SHARE` of the sample's rows are rows of the
      private file (:func:`shared_rows`) where an independent sample would share at most
      half (:func:`chance_shared_rows`), so chance cannot explain it;
    * the private rows mixed with others (or resampled): at least :data:`MIXED_FLOOR`
      shared, and twice what an independent sample would share plus 0.05.

    Only a file synthflow itself ships (its bundled public data, the demo's stand-in) is
    exempt, by where it lies, never by its name: a path given in the spec, absolute or
    relative, is checked. A table of a few coarse columns, whose independent samples
    share most rows, is checked for the same rows only: there a copy cannot be told
    from a sample. A spec whose public sample was itself published before this release
    (a public-use extract of the same registry: its rows are public) says so with
    ``public_sample_published: true``; then only the same-rows check runs, and the
    release records the declaration.

    Raises:
        ConfigError: Naming the key and the fix (no value or share of the data).
    """
    from synthflow.privacy.ledger import data_fingerprint  # noqa: PLC0415

    path = public_sample_path(spec)
    if path is None or is_bundled_public_data(path):
        return
    sample = public_sample(spec)
    if sample is None:
        return
    cols = [c for c in private.columns if c in sample.columns]
    views = [("", sample[cols], private[cols])]
    for tr in transformers:
        binned = (" (as the release reads it, binned)", tr.forward(sample), tr.forward(private))
        if not any(_same_frame(binned[1], v[1]) for v in views):
            views.append(binned)
    fix = (
        "the published noise figures (and a weighted regression fit's weights) are computed "
        "from the public sample without a charge, so it must be public data, never rows of "
        "the private file. Name a public file (e.g. a 'synthflow public-data draw') as "
        "public_sample; if this file was itself published before (a public-use extract of "
        "the same registry), say so with public_sample_published: true in the spec. "
        "Nothing was spent"
    )
    name = repr(spec.public_sample)
    for how, pub, priv in views:
        if len(pub) == len(priv) and data_fingerprint(pub) == data_fingerprint(priv):
            raise ConfigError(
                f"the spec's public_sample {name} holds the same rows as --data{how}: " + fix
            )
    if spec.public_sample_published:
        return
    for how, pub, priv in views:
        what = _overlap(pub, priv, binned=bool(how))
        if what:
            raise ConfigError(f"the spec's public_sample {name}{how} {what}: " + fix)


def _same_frame(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return a.shape == b.shape and bool((a.to_numpy() == b.to_numpy()).all())


def _overlap(sample: pd.DataFrame, private: pd.DataFrame, *, binned: bool = False) -> str:
    """Why ``sample`` holds rows of ``private`` beyond chance ('' when it does not).

    ``binned``: the rows as the release reads them, where independent samples share most
    rows (births: 0.78-0.93), so only containment is telling: every row of the sample
    found in the private file, where a sample of that size from another half of the
    private file is not (:func:`contained_by_chance`).
    """
    shared = shared_rows(sample, private)
    if shared < (SUBSET_SHARE if binned else MIXED_FLOOR):  # decided without chance
        return ""
    if binned:
        if contained_by_chance(private, len(sample)) <= SUBSET_SHARE - 0.03:
            return "is part of --data: nearly every one of its rows is a row of --data"
        return ""
    chance = chance_shared_rows(private)
    if shared >= SUBSET_SHARE and chance <= 0.5:
        return "is part of --data: nearly every one of its rows is a row of --data"
    if shared >= 2 * chance + 0.05:
        return (
            "holds rows of --data: far more of its rows are rows of --data than an "
            "independent sample of one population would share"
        )
    return ""


def contained_by_chance(reference: pd.DataFrame, rows: int) -> float:
    """The share of a ``rows``-row independent sample that ``reference`` holds, estimated.

    A sample of ``rows`` rows (at most half the reference) from one half of the reference
    (a fixed permutation), compared with the other half: a smaller reference shares less
    than the whole file would, a smaller sample more, so capping the sample at half keeps
    the estimate from refusing a sample that is merely small.
    """
    order = np.random.default_rng(0).permutation(len(reference))  # a fixed split, not noise
    half = len(reference) // 2
    if half == 0:
        return 1.0
    take = order[: max(1, min(rows, half))]
    return shared_rows(reference.iloc[take], reference.iloc[order[half:]])
