"""Shared test fixtures and paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
NO_JIT = os.environ.get("NUMBA_DISABLE_JIT") == "1"

# Deep checks cost minutes in pure Python; with the JIT off they are skipped, with the reason.
skip_without_jit = pytest.mark.skipif(NO_JIT, reason="deep perft needs the JIT (NUMBA_DISABLE_JIT=1)")
