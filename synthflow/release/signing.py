"""Ed25519 signatures of release packages (``release --sign``, ``audit --key``).

A government publishes under its name: the steward signs the package's MANIFEST.json
(which holds the SHA-256 of every other file) with an Ed25519 private key kept in the
enclave, and publishes the public key beside the release and in its datasheet. A
reviewer who obtained the publisher's public key elsewhere (its website, a registry)
runs ``synthflow audit RELEASE --key PUB``: a package rewritten by anyone else, however
carefully, fails. Signing and verification use the ``cryptography`` library.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from synthflow._extras import require
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = [
    "PUBLIC_KEY",
    "SIGNATURE",
    "fingerprint",
    "generate_keypair",
    "load_private_key",
    "public_pem",
    "sign",
    "verify",
]

PUBLIC_KEY = "PUBLIC_KEY.pem"
"""The signer's public key, beside the release (listed in its MANIFEST)."""
SIGNATURE = "SIGNATURE"
"""Base64 Ed25519 signature of MANIFEST.json's bytes (not listed in the MANIFEST)."""
ALGORITHM = "Ed25519"


def _need_cryptography() -> None:
    """The ``sign`` extra, or a refusal naming it (before a key is read or a charge made)."""
    require(
        "cryptography",
        what="signing and checking signatures (keygen, release --sign, audit of a signed release)",
    )


def generate_keypair(private_path: str | Path, public_path: str | Path) -> str:
    """Write a new key pair (private key readable by its owner only); returns the fingerprint.

    Raises:
        ConfigError: If either file exists (a key is never overwritten).
    """
    _need_cryptography()
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    private_path, public_path = Path(private_path), Path(public_path)
    for p in (private_path, public_path):
        if p.exists():
            raise ConfigError(f"{str(p)!r} exists; a key is never overwritten: choose a new name")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    public_path.write_bytes(public_pem(key))
    return fingerprint(public_path.read_bytes())


def load_private_key(path: str | Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in a PEM file (checked before anything is charged).

    Raises:
        ConfigError: Missing file, not a PEM private key, or not Ed25519.
    """
    _need_cryptography()
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"--sign {str(p)!r} does not exist; make a key with 'synthflow keygen'")
    try:
        key = serialization.load_pem_private_key(p.read_bytes(), password=None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(
            f"--sign {str(p)!r} is not an unencrypted PEM private key ({type(exc).__name__}); "
            "make one with 'synthflow keygen'"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(
            f"--sign {str(p)!r} is not an Ed25519 key; make one with 'synthflow keygen'"
        )
    return key


def public_pem(key: Ed25519PrivateKey) -> bytes:
    """The public half of ``key`` as PEM (SubjectPublicKeyInfo)."""
    _need_cryptography()
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415

    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def fingerprint(pem: bytes) -> str:
    """SHA-256 of a public key's raw 32 bytes (hex): what the datasheet prints.

    Raises:
        ConfigError: If ``pem`` is not an Ed25519 public key.
    """
    _need_cryptography()
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415

    raw = _public_key(pem).public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def sign(key: Ed25519PrivateKey, data: bytes) -> str:
    """Base64 signature of ``data``, one line."""
    return base64.b64encode(key.sign(data)).decode("ascii")


def verify(pem: bytes, data: bytes, signature: str) -> bool:
    """Whether ``signature`` (base64) is the key's signature of ``data``."""
    _need_cryptography()
    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415

    try:
        _public_key(pem).verify(base64.b64decode(signature.strip(), validate=True), data)
    except (InvalidSignature, ValueError):
        return False
    return True


def _public_key(pem: bytes):
    _need_cryptography()
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PublicKey,
    )

    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError):
        raise ConfigError("not a PEM public key; pass the publisher's PUBLIC_KEY.pem") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ConfigError("not an Ed25519 public key")
    return key
