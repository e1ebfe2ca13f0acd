"""The rules every job applies to its inputs, in one place."""

from __future__ import annotations

from synthflow.errors import ConfigError
from synthflow.privacy.rng import PrivacyRNG

__all__ = ["check_rng", "privacy_rng"]


def privacy_rng(seed: int | None, *, public: bool, option: str = "--seed") -> PrivacyRNG:
    """The randomness of a computation on data: a CSPRNG, or a seed on public data only.

    A seed makes the noise reproducible, so anyone who knows it can subtract it: it is
    for tests and data declared public, never for a release of private data.

    Raises:
        ConfigError: For a seed on data not declared public.
    """
    if seed is None:
        return PrivacyRNG.secure()
    if not public:
        raise ConfigError(
            f"{option} makes the noise reproducible and is only for tests and public data; "
            f"add --public to declare the input public, or drop {option} for a release"
        )
    return PrivacyRNG.from_seed(seed)


def check_rng(rng: PrivacyRNG, *, public: bool) -> PrivacyRNG:
    """``rng`` for a computation on data: a seeded one only on public data (the API's form).

    Raises:
        ConfigError: For a seeded PrivacyRNG on data not declared public.
    """
    if not rng.is_secure and not public:
        raise ConfigError(
            "a seeded PrivacyRNG is for public data only: pass public=True to declare the "
            "data public, or leave rng out (a CSPRNG) for private data"
        )
    return rng
