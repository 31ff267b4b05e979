"""The fixture site, built once per test session in both competition states."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.site.goldens import build_fixture_site


@pytest.fixture(scope="session")
def site_running(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "running"
    build_fixture_site("running", out)
    return out


@pytest.fixture(scope="session")
def site_ended(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "ended"
    build_fixture_site("ended", out)
    return out


def site_text(folder: Path) -> dict[str, str]:
    """Every file of a built site as text (gzip files decompressed: a leak inside one counts)."""
    import gzip

    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            blob = path.read_bytes()
            if path.suffix == ".gz":
                blob = gzip.decompress(blob)
            out[path.relative_to(folder).as_posix()] = blob.decode("utf-8", errors="replace")
    return out
