"""Screening: flagged imports by AST, opaque data files by name, magic bytes and .npy headers."""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest

from grader.documents.submission import load_submission
from grader.season.screening import screen

pytestmark = pytest.mark.timeout(30)
AGENT = "class Agent:\n    def prepare(self, e): pass\n    def act(self, o, m): return 0\n    def observe_outcome(self, o): pass\n"


def flags_of(tmp_path, files: dict[str, bytes | str]):
    for name, data in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return [(f.kind, f.file, f.line, f.detail) for f in screen(load_submission(tmp_path))]


@pytest.mark.parametrize(
    "source,detail",
    [
        ("import subprocess\n", "imports subprocess"),
        ("import os\nos.system('ls')\n", "calls os.system"),
        ("from os import popen\n", "calls os.popen"),
        ("from multiprocessing import Pool\n", "imports multiprocessing"),
        ("import socket as s\n", "imports socket"),
        ("from urllib import request\n", "imports urllib.request"),
        ("import ctypes.util\n", "imports ctypes.util"),
        ("__import__('subprocess')\n", "imports subprocess"),
        ("import importlib\nimportlib.import_module('socket')\n", "imports socket"),
        ("def f():\n    import pickle\n", "imports pickle"),
        # Reached by a name computed at run time: screening cannot tell what, so it flags the way in.
        ("ct = __builtins__['__imp' + 'ort__']('ct' + 'ypes')\n", "uses __builtins__"),
        ("name = 'sock' + 'et'\nm = __import__(name)\n", "uses __import__"),
        ("f = getattr(__builtins__, 'ev' + 'al')\n", "uses __builtins__"),
        ("eval('1 + 1')\n", "uses eval"),
        ("exec('x = 1')\n", "uses exec"),
        ("import sys\nm = sys.modules['os']\n", "uses sys.modules"),
        ("import builtins\n", "imports builtins"),
        ("import importlib as il\nm = il.import_module('so' + 'cket')\n", "imports importlib"),
        ("x = (lambda: 0).__globals__['__builtins__']\n", "uses __builtins__"),
    ],
)
def test_flagged_imports(tmp_path, source, detail):
    found = flags_of(tmp_path, {"agent.py": AGENT + source})
    assert found and all(f[0] == "import" and f[1] == "agent.py" for f in found)
    assert any(detail in f[3] for f in found), found


@pytest.mark.parametrize(
    "source",
    [
        "import numpy as np\nimport json, math, random\n",
        "from urllib.parse import urlparse\n",
        "import os\nos.path.join('a')\n",
    ],
)
def test_ordinary_imports_pass(tmp_path, source):
    assert flags_of(tmp_path, {"agent.py": AGENT + source, "helpers/util.py": source}) == []


def npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=True)
    return buf.getvalue()


@pytest.mark.parametrize(
    "name,data,opaque",
    [
        ("weights.json", '{"a": [1, 2]}', False),
        ("table.csv", "r,c,w\n0,0,1.5\n", False),
        ("prior.npz", npz(w=np.zeros((8, 8))), False),
        ("prior.npy", npy(np.arange(4)), False),
        ("model.pkl", pickle.dumps({"a": 1}), True),
        ("model.dat", pickle.dumps({"a": 1}), True),
        ("objects.npy", npy(np.array([{"a": 1}], dtype=object)), True),
        ("objects.npz", npz(w=np.array([{"a": 1}], dtype=object)), True),
        ("blob.bin", b"\x00\x01\x02", True),
        ("lib.so", b"\x7fELF....", True),
        ("mystery", b"\x00\xff\xfe\x00garbage", True),
    ],
)
def test_opaque_files(tmp_path, name, data, opaque):
    found = flags_of(tmp_path, {"agent.py": AGENT, name: data})
    assert bool(found) == opaque, found
    if opaque:
        assert found[0][:2] == ("opaque", name)


def test_npz_with_a_non_array_member_is_opaque(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("payload.pkl", pickle.dumps(1))
    assert flags_of(tmp_path, {"agent.py": AGENT, "prior.npz": buf.getvalue()})[0][0] == "opaque"


# -- red team, hostile bytes --------------------------------------------------------
def test_a_module_too_deep_for_the_screen_is_flagged_not_passed(tmp_path):
    """Python's compiler may run what ast cannot parse: its imports must not go unread."""
    found = flags_of(tmp_path, {"agent.py": AGENT, "helper.py": "import subprocess\nx = " + "1+" * 100_000 + "1\n"})
    assert found == [
        (
            "import",
            "helper.py",
            None,
            "too deeply nested for the screen to parse: its imports are unchecked; read it before labelling",
        )
    ]


@pytest.mark.parametrize(
    "name, data",
    [
        (
            "w.npy",
            b"\x93NUMPY\x01\x00"
            + (118).to_bytes(2, "little")
            + b"{'descr': "
            + b"[" * 50
            + b"]" * 50
            + b", 'fortran_order': False, 'shape': (1,), }"
            + b" " * 10
            + b"\n",
        ),
        ("w.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': 12}   \n"),
        ("w.npz", b"PK\x03\x04" + b"\x00" * 60),
    ],
)
def test_an_unreadable_array_file_is_opaque(tmp_path, name, data):
    found = flags_of(tmp_path, {"agent.py": AGENT, name: data})
    assert [(kind, file) for kind, file, _, _ in found] == [("opaque", name)]
    assert "not a readable" in found[0][3]
