"""``synthflow init`` and ``synthflow.draft_spec``: a spec drafted from PUBLIC data, for review.

The draft types every column (whole numbers: ``int``; text and booleans:
``categorical``; a date: the ``int`` month read from it through ``input.mapping``),
drafts public bins, domains, bounds, categories and conditional-mean groups from the
public file, and adds default budgets, criteria (more kinds commented out, drafted for
the file's columns) and a configuration space. Every drafted value carries a
``# REVIEW`` comment: a spec's domains, bounds and categories must be public facts,
never read from private data, so the command runs on files declared public only. A
codebook (``--domains FILE``, :mod:`synthflow.init.codebook`) gives documented
domains and categories; the others are those observed in the public data, and the draft
says so on each. The draft passes ``synthflow validate`` as written. The command line and
the Python API (a file or a DataFrame) call the same :func:`draft_spec`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthflow.errors import ConfigError
from synthflow.init.columns import typed_columns

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.config.model import ReleaseSpec

__all__ = ["DraftSpec", "draft_spec", "write_draft"]


@dataclasses.dataclass(frozen=True)
class DraftSpec:
    """A release spec drafted from PUBLIC data, for review (:func:`draft_spec`).

    ``text`` is the YAML with its ``# REVIEW`` comments, ``write(path)`` saves it (an
    existing file is refused unless ``force=True``), ``spec`` is the draft loaded as a
    :class:`~synthflow.ReleaseSpec`, unreviewed, to try it in a notebook.
    """

    name: str
    columns: tuple[str, ...]
    sample: Path | None
    """The public file drafted from (absolute), the spec's ``public_sample``; None for a
    DataFrame."""
    _render: Callable[[str | None], str] = dataclasses.field(repr=False)

    @property
    def text(self) -> str:
        """The drafted YAML, its ``public_sample`` relative to the working directory."""
        return self.text_for(Path("."))

    def text_for(self, spec_dir: str | Path) -> str:
        """The drafted YAML for a spec saved in ``spec_dir`` (``public_sample`` relative)."""
        if self.sample is None:
            return self._render(None)
        sample = os.path.relpath(self.sample, Path(spec_dir).resolve())
        if sample.startswith(f"..{os.sep}.."):  # far away: the absolute path reads better
            sample = str(self.sample)
        return self._render(sample)

    @property
    def spec(self) -> ReleaseSpec:
        """The draft as a spec, before review (its ``public_sample`` an absolute path)."""
        from synthflow.loader import load_spec  # noqa: PLC0415

        text = self._render(None if self.sample is None else str(self.sample))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{self.name}.yaml"
            path.write_text(text, encoding="utf-8")
            return load_spec(path)

    def write(self, path: str | Path, *, force: bool = False) -> Path:
        """Write the draft to ``path``; an existing file is replaced only with ``force``.

        Raises:
            ConfigError: ``path`` exists (without ``force``), is a directory, or its
                directory does not exist or cannot be written.
        """
        from synthflow._util.outputs import check_output_file  # noqa: PLC0415

        target = Path(path)
        if target.exists() and not target.is_dir() and not force:
            raise ConfigError(
                f"{str(target)!r} exists and is never overwritten silently; choose a new "
                "file, or pass force=True to replace it"
            )
        check_output_file(target, force=True, option="the spec file")
        with target.open("w" if force else "x", encoding="utf-8") as fh:
            fh.write(self.text_for(target.parent))
        return target

    def __str__(self) -> str:
        return self.text


def draft_spec(
    data: str | Path | pd.DataFrame,
    *,
    name: str | None = None,
    skip: tuple[str, ...] | list[str] = (),
    rows: int | None = None,
    domains: str | Path | Mapping[str, Any] | None = None,
) -> DraftSpec:
    """A release spec drafted from PUBLIC data, for review: ``synthflow init`` in Python.

    Every column is typed, given bins, a domain, bounds, categories and groups, default
    budgets, criteria (thresholds two samples of the public data meet) and a space, every
    drafted value marked ``# REVIEW``. The domains and categories are the values observed
    in ``data`` unless ``domains`` gives them: the private data may hold others, which
    are refused (``synthflow validate SPEC --data PRIVATE`` checks them first).

    Example::

        draft = synthflow.draft_spec(public_frame, rows=20_000, domains={"age": [0, 120]})
        draft.write("my_spec.yaml")  # review it, then: synthflow validate my_spec.yaml

    Args:
        data: PUBLIC data: a CSV (optionally compressed) or Parquet file, or a DataFrame.
            Never private data: its ranges and categories are written into the spec.
        name: The release's name (default: the file's name; ``release`` for a frame).
        skip: Columns to leave out.
        rows: The private data's row count (public under ``replace_one``): thresholds
            are set so that two samples of this many public rows pass them, with a margin
            (:mod:`synthflow.init.criteria`). Default: half the public data.
        domains: A codebook (JSON or YAML file, or a mapping) of column to public domain:
            ``[MIN, MAX]``, ``{min: MIN, max: MAX}`` or a size ``N`` (codes ``0..N-1``)
            for a whole-number column, the list of categories for a text column
            (:mod:`synthflow.init.codebook`).

    Raises:
        DataError: The data cannot be read, have no rows, or a column cannot be typed.
        ConfigError: A bad codebook (an unknown column, an entry of the wrong form, or one
            that does not cover the public values), or a bad ``rows``.
    """
    import pandas as pd  # noqa: PLC0415

    from synthflow._util.readers import read_table  # noqa: PLC0415
    from synthflow.init.codebook import read_codebook  # noqa: PLC0415
    from synthflow.init.criteria import (  # noqa: PLC0415
        calibrate,
        drafted_criteria,
        public_file,
    )
    from synthflow.init.text import render_draft  # noqa: PLC0415

    if rows is not None:
        from synthflow.public.draw_sample import check_rows  # noqa: PLC0415

        check_rows(rows)  # before the data are read: a row count sizes the drafting's tables
    codebook = read_codebook(domains) if domains is not None else None
    if isinstance(data, pd.DataFrame):
        path, frame, where = None, data.rename(columns=str), "the DataFrame"
        stem, label = "release", "synthflow.draft_spec from a PUBLIC DataFrame"
    else:
        path = Path(data)
        frame, where = read_table(path), repr(str(path))
        stem = path.name.split(".")[0]
        label = f"'synthflow init' from the PUBLIC file {path.name}"
    cols = typed_columns(frame, where, tuple(skip), codebook)
    name = name or re.sub(r"[^A-Za-z0-9_-]+", "_", stem).strip("_") or "release"
    criteria = drafted_criteria(cols)
    render = functools.partial(
        render_draft, label, nrows=len(frame), name=name, cols=cols, criteria=criteria
    )
    with public_file(frame, path) as public:
        every = render(str(public.resolve()), None, all_on=True)  # scored, every criterion on
        calibration = calibrate(every, public, rows or max(1, len(frame) // 2))
    return DraftSpec(
        name=name,
        columns=tuple(c.name for c in cols),
        sample=None if path is None else path.resolve(),
        _render=lambda sample: render(sample, calibration),
    )


def write_draft(
    data: str | Path, out: str | Path, *, name: str | None = None, force: bool = False,
    skip: tuple[str, ...] = (), rows: int | None = None, domains: str | Path | None = None,
) -> Path:  # fmt: skip
    """Write :func:`draft_spec` to ``out`` (refused when it exists, unless ``force``)."""
    from synthflow._util.outputs import check_output_file  # noqa: PLC0415

    inputs = (data,) if domains is None else (data, domains)
    target = check_output_file(out, force=force, option="--out", protected=inputs)
    draft = draft_spec(data, name=name, skip=skip, rows=rows, domains=domains)
    return draft.write(target, force=force)
