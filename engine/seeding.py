"""Seeds: every game's randomness derives from a root seed and the game's place, by hashing.

Hashing (not a running RNG) makes a game's seed independent of how many games ran before
it, on which worker, in what order: the property rounds need to replay byte-identically.
"""

from __future__ import annotations

import hashlib

import numpy as np

_MASK64 = (1 << 64) - 1


def derive_seed(*parts: object) -> int:
    """A 64-bit non-zero seed from any sequence of printable parts (root seed, env id, phase, index)."""
    text = "\x1f".join(map(str, parts)).encode()
    value = int.from_bytes(hashlib.sha256(text).digest()[:8], "little")
    return value or 0x9E3779B97F4A7C15


def seed_sequence(root: int, count: int) -> np.ndarray:
    """`count` non-zero uint64 seeds for batch play, by splitmix64 over (root, index).

    Vectorised numpy arithmetic wraps modulo 2**64 silently, which is what splitmix64 wants.
    """
    x = np.uint64(root & _MASK64) + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x = x ^ (x >> np.uint64(31))
    x[x == 0] = np.uint64(0x9E3779B97F4A7C15)
    return x
