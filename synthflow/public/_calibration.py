"""The calibration: the figures the NVSS-like simulator draws from, and their YAML file.

See :mod:`synthflow.public.nvss` for the model and :func:`synthflow.public.nvss.calibrate`
for how the figures are computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from synthflow.errors import ConfigError
from synthflow.public._summaries import (
    ConditionalDistribution,
    ConditionalMeans,
    ConditionalQuantiles,
    Distribution,
)

__all__ = ["FORMAT", "Calibration"]

FORMAT = "synthflow-nvss-calibration/1"
"""Value of the ``format`` key of calibration YAML files."""

_SUMMARY_KEYS = (
    "birth_month",
    "is_female",
    "mother_age",
    "parity_by_mother_age",
    "gestation_by_mother_age",
    "gestation_by_parity",
    "birth_weight_by_gestation",
    "birth_weight_by_sex",
    "birth_weight_mean_by_mother_age",
    "birth_weight_mean_by_parity",
    "birth_weight_recording",
)


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """Figures the simulator draws from: 1-way and 2-way summaries of one NVSS sample."""

    source: str
    """The sample the figures were computed from (file name and description)."""
    created: str
    """ISO date of the calibration."""
    sample_rows: int
    """Rows of that sample."""
    year: int
    """Year written into ``date_of_birth`` (the most frequent year of the sample)."""
    birth_month: Distribution
    """Month of birth, 1..12."""
    female_share: float
    """Share of girls."""
    mother_age: Distribution
    """Mother's age in single years."""
    parity_by_age: ConditionalDistribution
    """Parity (top-coded at :data:`PARITY_TOP_CODE`) within mother's age groups."""
    gestation_by_age: ConditionalDistribution
    """Gestation week within the mother's age groups of :attr:`parity_by_age`."""
    gestation_by_parity: ConditionalDistribution
    """Gestation week within parity groups."""
    weight_by_gestation: ConditionalQuantiles
    """Birth-weight quantiles within groups of gestation weeks."""
    weight_mean_by_age: ConditionalMeans
    """Mean birth weight within the mother's age groups of :attr:`parity_by_age`."""
    weight_mean_by_parity: ConditionalMeans
    """Mean birth weight within the parity groups of :attr:`gestation_by_parity`."""
    weight_ratio_male: float
    """Mean birth weight of boys divided by the overall mean."""
    weight_ratio_female: float
    """Mean birth weight of girls divided by the overall mean."""
    ounce_share: float
    """Share of weights recorded in whole ounces (excess over chance on the ounce grid)."""
    round10_share: float
    """Share of the other weights recorded to 10 g (excess over chance)."""

    def __post_init__(self) -> None:
        if not set(self.birth_month.values) <= set(range(1, 13)):
            raise ConfigError(
                f"calibration birth_month values must be in 1..12, got {self.birth_month.values}"
            )
        if self.gestation_by_age.groups != self.parity_by_age.groups:
            raise ConfigError(
                "gestation_by_mother_age must use the mother-age groups of parity_by_mother_age"
            )
        if self.gestation_by_age.values != self.gestation_by_parity.values:
            raise ConfigError(
                "gestation_by_mother_age and gestation_by_parity must list the same weeks"
            )
        if self.weight_mean_by_age.groups != self.parity_by_age.groups:
            raise ConfigError(
                "birth_weight_mean_by_mother_age must use the groups of parity_by_mother_age"
            )
        if self.weight_mean_by_parity.groups != self.gestation_by_parity.groups:
            raise ConfigError(
                "birth_weight_mean_by_parity must use the groups of gestation_by_parity"
            )
        for name in ("female_share", "ounce_share", "round10_share"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"calibration {name} ({value}) must be in [0, 1]")
        for name in ("weight_ratio_male", "weight_ratio_female"):
            if not 0.5 <= getattr(self, name) <= 2.0:
                raise ConfigError(f"calibration {name} ({getattr(self, name)}) must be in [0.5, 2]")

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready mapping (see :meth:`to_yaml`)."""
        return {
            "format": FORMAT,
            "source": self.source,
            "created": self.created,
            "sample_rows": self.sample_rows,
            "year": self.year,
            "summaries": {
                "birth_month": self.birth_month.to_dict(),
                "is_female": {"variables": ["is_female"], "share": self.female_share},
                "mother_age": self.mother_age.to_dict(),
                "parity_by_mother_age": self.parity_by_age.to_dict(),
                "gestation_by_mother_age": self.gestation_by_age.to_dict(),
                "gestation_by_parity": self.gestation_by_parity.to_dict(),
                "birth_weight_by_gestation": self.weight_by_gestation.to_dict(),
                "birth_weight_by_sex": {
                    "variables": ["is_female", "birth_weight"],
                    "statistic": "mean weight of the sex / overall mean weight",
                    "male": self.weight_ratio_male,
                    "female": self.weight_ratio_female,
                },
                "birth_weight_mean_by_mother_age": self.weight_mean_by_age.to_dict(),
                "birth_weight_mean_by_parity": self.weight_mean_by_parity.to_dict(),
                "birth_weight_recording": {
                    "variables": ["birth_weight"],
                    "ounce_share": self.ounce_share,
                    "round10_share": self.round10_share,
                },
            },
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Calibration:
        """Inverse of :meth:`to_dict`; ConfigError on a malformed mapping."""
        try:
            if d.get("format") != FORMAT:
                raise ConfigError(f"'format' is {d.get('format')!r}, expected {FORMAT!r}")
            s = d["summaries"]
            unknown = sorted(set(s) - set(_SUMMARY_KEYS))
            if unknown:
                raise ConfigError(f"unknown summaries {unknown}; expected {list(_SUMMARY_KEYS)}")
            return cls(
                source=str(d["source"]),
                created=str(d["created"]),
                sample_rows=int(d["sample_rows"]),
                year=int(d["year"]),
                birth_month=Distribution.from_dict(s["birth_month"]),
                female_share=float(s["is_female"]["share"]),
                mother_age=Distribution.from_dict(s["mother_age"]),
                parity_by_age=ConditionalDistribution.from_dict(s["parity_by_mother_age"]),
                gestation_by_age=ConditionalDistribution.from_dict(s["gestation_by_mother_age"]),
                gestation_by_parity=ConditionalDistribution.from_dict(s["gestation_by_parity"]),
                weight_by_gestation=ConditionalQuantiles.from_dict(s["birth_weight_by_gestation"]),
                weight_mean_by_age=ConditionalMeans.from_dict(s["birth_weight_mean_by_mother_age"]),
                weight_mean_by_parity=ConditionalMeans.from_dict(s["birth_weight_mean_by_parity"]),
                weight_ratio_male=float(s["birth_weight_by_sex"]["male"]),
                weight_ratio_female=float(s["birth_weight_by_sex"]["female"]),
                ounce_share=float(s["birth_weight_recording"]["ounce_share"]),
                round10_share=float(s["birth_weight_recording"]["round10_share"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(
                f"malformed calibration ({type(exc).__name__}: {exc}); regenerate it with "
                "'synthflow public-data calibrate'"
            ) from exc

    def to_yaml(self, path: str | Path) -> Path:
        """Write the figures as YAML with a header saying where they came from."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        header = [
            "NVSS-like simulator calibration (synthflow.public.nvss).",
            f"Source: {self.source}, {self.sample_rows} rows.",
            f"Created: {self.created}.",
            "Summaries (1-way and 2-way only; no rows, no 3-way table): birth-month,",
            "is_female and mother_age 1-way distributions; parity distribution by mother-age",
            "group; gestation-week distributions by mother-age group and by parity group",
            "(combined by iterative proportional fitting); birth-weight quantiles by",
            "gestation-week group; mean birth weight by sex / overall mean, by mother-age",
            "group and by parity group; shares of weights recorded in whole ounces and in 10 g.",
            "Regenerate: python -m synthflow public-data calibrate "
            f"--sample {self.source} --out <this file>",
        ]
        body = yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None, width=100)
        p.write_text("".join(f"# {line}\n" for line in header) + body, encoding="utf-8")
        return p

    @classmethod
    def from_yaml(cls, path: str | Path) -> Calibration:
        """Read a file written by :meth:`to_yaml`."""
        p = Path(path)
        if not p.is_file():
            raise ConfigError(
                f"calibration file {str(p)!r} does not exist; check the path or create one "
                "with 'synthflow public-data calibrate'"
            )
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ConfigError(f"calibration file {str(p)!r} is not valid YAML ({exc})") from exc
        except RecursionError:
            raise ConfigError(f"calibration file {str(p)!r} is nested too deeply") from None
        if not isinstance(data, dict):
            raise ConfigError(f"calibration file {str(p)!r} must hold a mapping at top level")
        return cls.from_dict(data)
