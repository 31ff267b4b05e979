"""`arena kit build`: the zip, its manifest, the rendered README, and the kit version."""

from __future__ import annotations

import datetime as dt
import io
import json
import zipfile

import pytest

from grader.cli.main import main
from grader.common.limits import DEFAULT_LIMITS
from grader.kit.build import KIT_FOLDER, VERSION_RE, KitError, build_kit, kit_source_files, kit_version, render
from grader.sandbox.image import BASE_IMAGE, NUMPY_VERSION
from tests.kit.conftest import copy_tree

pytestmark = pytest.mark.timeout(240)
DAY = dt.date(2030, 1, 2)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = copy_tree(tmp_path_factory.mktemp("tree"))
    out = tmp_path_factory.mktemp("out")
    return root, build_kit(root=root, out=out, today=DAY)


def read_zip(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def test_the_zip_is_one_folder_holding_the_manifests_files(built):
    _, kit = built
    entries = read_zip(kit.zip_path)
    assert all(name.startswith(KIT_FOLDER + "/") for name in entries)
    names = sorted(name[len(KIT_FOLDER) + 1 :] for name in entries)
    manifest = json.loads(entries[f"{KIT_FOLDER}/kit.json"])
    assert names == manifest["files"] == list(kit.files)
    for required in ("agent.py", "README.md", "Makefile", "check.py", "package.py", "play.py", "kitenv.py"):
        assert required in names
    assert "version" not in names  # the site serves it; the kit carries it in kit.json


def test_the_wheel_holds_the_servers_gate(built):
    _, kit = built
    entries = read_zip(kit.zip_path)
    manifest = json.loads(entries[f"{KIT_FOLDER}/kit.json"])
    wheel = zipfile.ZipFile(io.BytesIO(entries[f"{KIT_FOLDER}/{manifest['wheel']}"]))
    inside = set(wheel.namelist())
    for module in (
        "grader/play/smoke.py",
        "grader/documents/submission.py",
        "grader/season/screening.py",
        "grader/kit/build.py",
        "grader/sandboxed/runner.py",
        "grader/sandboxed/wire.py",
        "engine/data/paper_layouts.json",
    ):
        assert module in inside


def test_the_manifest_carries_the_graders_runtime_row(built):
    _, kit = built
    manifest = json.loads(read_zip(kit.zip_path)[f"{KIT_FOLDER}/kit.json"])
    assert manifest["runtime"]["image"] == BASE_IMAGE and manifest["runtime"]["numpy"] == NUMPY_VERSION
    assert manifest["runtime"]["python"] == "3.11"
    assert manifest["requirements"][0] == f"numpy=={NUMPY_VERSION}"
    assert {r.split(">")[0].split("=")[0] for r in manifest["requirements"][1:]} == {
        "numba",
        "pyyaml",
        "pynacl",
        "jsonschema",
    }
    assert manifest["version"] == kit.version


def test_the_readme_is_rendered_from_the_graders_configuration(built):
    _, kit = built
    readme = read_zip(kit.zip_path)[f"{KIT_FOLDER}/README.md"].decode()
    assert "{{" not in readme and "}}" not in readme
    assert f"`{BASE_IMAGE}` with numpy {NUMPY_VERSION} pinned" in readme
    assert kit.version in readme.splitlines()[0]
    for shape, seconds in DEFAULT_LIMITS.pace_table().items():
        assert f"| {shape} | {seconds * 1e3:.1f} ms |" in readme
    assert "6x8, 8x8, 10x10, 12x10" in readme  # the smoke gate's boards


def test_the_version_is_written_and_named_by_date_and_content(built):
    root, kit = built
    assert VERSION_RE.match(kit.version) and kit.version.startswith("2030.01.02-")
    assert (root / "kit" / "version").read_text() == kit.version + "\n"


def test_an_unchanged_kit_keeps_its_version_and_bytes(built, tmp_path):
    root, kit = built
    again = build_kit(root=root, out=tmp_path, today=DAY + dt.timedelta(days=9))
    assert again.version == kit.version  # the date of the first build is kept
    assert again.zip_path.read_bytes() == kit.zip_path.read_bytes()


def test_the_version_rules():
    assert kit_version("0123456789", None, DAY) == "2030.01.02-0123456789"
    assert kit_version("0123456789", "2029.12.31-0123456789\n", DAY) == "2029.12.31-0123456789"
    assert kit_version("abcdefabcd", "2029.12.31-0123456789", DAY) == "2030.01.02-abcdefabcd"
    assert kit_version("abcdefabcd", "not a version", DAY) == "2030.01.02-abcdefabcd"


def test_a_changed_kit_file_changes_the_version(tmp_path):
    root = copy_tree(tmp_path / "tree")
    first = build_kit(root=root, out=tmp_path / "a", today=DAY)
    with open(root / "kit" / "agent.py", "a") as fh:
        fh.write("# a comment is a change\n")
    second = build_kit(root=root, out=tmp_path / "b", today=DAY + dt.timedelta(days=1))
    assert second.version != first.version and second.version.startswith("2030.01.03-")


def test_a_kit_folder_without_its_scripts_is_refused(tmp_path):
    (tmp_path / "agent.py").write_text("class Agent: pass\n")
    with pytest.raises(KitError, match="check.py"):
        kit_source_files(tmp_path)


def test_an_unknown_readme_field_is_named():
    with pytest.raises(KitError, match="no_such_field"):
        render("numpy {{numpy}} and {{no_such_field}}", {"numpy": "2"}, "README.md")
    assert render("numpy {{ numpy }}", {"numpy": "2"}, "README.md") == "numpy 2"


def test_the_command_prints_the_zip_and_the_version(tmp_path, capsys):
    root = copy_tree(tmp_path / "tree")
    code = main(["kit", "build", "--source", str(root), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and out[0] == str(tmp_path / "out" / "othello-arena-kit.zip")
    assert VERSION_RE.match(out[1]) and (root / "kit" / "version").read_text().strip() == out[1]


def test_the_command_refuses_a_folder_that_is_not_a_checkout(tmp_path, capsys):
    code = main(["kit", "build", "--source", str(tmp_path), "--out", str(tmp_path / "out")])
    assert code == 1 and "not the arena's source tree" in capsys.readouterr().err


def test_the_projects_readme_does_not_change_the_version(tmp_path):
    root = copy_tree(tmp_path / "tree")
    first = build_kit(root=root, out=tmp_path / "a", today=DAY)
    with open(root / "README.md", "a") as fh:
        fh.write("\nAn edit to the arena's own README.\n")
    assert build_kit(root=root, out=tmp_path / "b", today=DAY + dt.timedelta(days=1)).version == first.version
