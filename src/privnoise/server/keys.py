"""API keys: ``pn_<key id>_<secret>``, stored as a salted scrypt hash of the secret, compared in constant time.

The key id (public, random) finds the row; the secret (256 random bits) is never stored. Verification of an
unknown key id still runs one scrypt, so the time and the answer (401) do not say whether a querier exists.
Verified keys are remembered in memory under an HMAC with a per-process random secret, so repeated requests
cost one HMAC instead of one scrypt.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading

__all__ = ["hash_secret", "new_key", "split_key", "verify_secret"]

_N, _R, _P = 2**14, 8, 1
_DUMMY = "scrypt$" + "00" * 16 + "$" + "00" * 32
_CACHE_SECRET = secrets.token_bytes(32)
_cache: dict[bytes, str] = {}
_cache_lock = threading.Lock()


def new_key() -> tuple[str, str, str]:
    """A fresh key: (full key shown once, key id, stored hash)."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    return f"pn_{key_id}_{secret}", key_id, hash_secret(secret)


def hash_secret(secret: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${salt.hex()}${digest.hex()}"


def split_key(key: str) -> tuple[str, str] | None:
    """(key id, secret) of a well-formed key, else None."""
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != "pn" or len(parts[1]) != 16 or not parts[2]:
        return None
    return parts[1], parts[2]


def verify_secret(secret: str, stored: str | None) -> bool:
    """Whether ``secret`` matches ``stored`` (a dummy hash is checked when the key id is unknown)."""
    real = stored is not None
    stored = stored or _DUMMY
    tag = hmac.new(_CACHE_SECRET, f"{stored}\0{secret}".encode(), hashlib.sha256).digest()
    with _cache_lock:
        if real and _cache.get(tag) == stored:
            return True
    try:
        _, salt_hex, digest_hex = stored.split("$")
        salt, digest = bytes.fromhex(salt_hex), bytes.fromhex(digest_hex)
    except ValueError:
        return False
    computed = hashlib.scrypt(secret.encode()[:1024], salt=salt, n=_N, r=_R, p=_P, dklen=32)
    ok = hmac.compare_digest(computed, digest) and real
    if ok:
        with _cache_lock:
            if len(_cache) > 10_000:
                _cache.clear()
            _cache[tag] = stored
    return ok
