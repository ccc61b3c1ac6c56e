"""The import cache (runtime/import_cache.py): a second process's ``import tensorlib`` parses no
YAML and compiles no generated function (functions generated later, e.g. an op's autograd node
at its first backward, compile as before); damaged files and edited text never give stale or
broken results."""
import json
import os
import subprocess
import sys

import pytest

import tensorlib as tl
from tensorlib.runtime import import_cache

SRC = os.path.dirname(os.path.dirname(os.path.abspath(tl.__file__)))

_PROBE = r"""
import builtins, json, sys
generated = []
_compile = builtins.compile
def counting(src, filename, *args, **kwargs):
    if filename.startswith(("<tensorlib.", "<dispatch ", "<autograd", "<derivatives ")):
        generated.append(filename)
    return _compile(src, filename, *args, **kwargs)
builtins.compile = counting
import yaml
parsed = []
_load = yaml.load
def counting_load(*args, **kwargs):
    parsed.append(1)
    return _load(*args, **kwargs)
yaml.load = counting_load
import numpy as np
import tensorlib as tl
at_import = len(generated)
x = tl.asarray(np.array([1.0, -2.0, 3.0]), requires_grad=True)
y = (tl.exp(x) * 2.0).sum()
y.backward()
ok = bool(np.allclose(x.grad.numpy(), 2 * np.exp([1.0, -2.0, 3.0])))
print(json.dumps({"generated": at_import, "parsed": len(parsed), "ok": ok}))
"""


def _run(cache_dir):
    env = dict(os.environ, TENSORLIB_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _files(cache_dir):
    return [os.path.join(cache_dir, f) for f in os.listdir(cache_dir) if f.startswith("import-")]


def test_a_second_import_parses_and_compiles_nothing(tmp_path):
    first = _run(tmp_path)
    assert first["ok"] and first["generated"] > 150 and first["parsed"] == 2
    assert len(_files(tmp_path)) == 1
    second = _run(tmp_path)
    assert second == {"generated": 0, "parsed": 0, "ok": True}


@pytest.mark.parametrize("damage", ["truncated", "zeroed tail", "not a pickle"])
def test_a_damaged_file_is_ignored_and_rewritten(tmp_path, damage):
    _run(tmp_path)
    (path,) = _files(tmp_path)
    good = open(path, "rb").read()
    bad = {"truncated": good[: len(good) // 2], "zeroed tail": good[:-64] + bytes(64),
           "not a pickle": b"\x00garbage"}[damage]
    with open(path, "wb") as f:
        f.write(bad)
    res = _run(tmp_path)
    assert res["ok"] and res["generated"] > 150 and res["parsed"] == 2
    assert _run(tmp_path) == {"generated": 0, "parsed": 0, "ok": True}


def test_entries_are_keyed_by_content(tmp_path, monkeypatch):
    """Edited YAML or source text gets its own entry: never an older result."""
    monkeypatch.setenv("TENSORLIB_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(import_cache, "_entries", None)
    monkeypatch.setattr(import_cache, "_used", {})
    monkeypatch.setattr(import_cache, "_fresh", False)
    doc = tmp_path / "a.yaml"
    doc.write_text("- name: one\n")
    assert import_cache.load_yaml(str(doc)) == [{"name": "one"}]
    doc.write_text("- name: two\n")
    assert import_cache.load_yaml(str(doc)) == [{"name": "two"}]
    scope = {}
    exec(import_cache.compile_source("def f():\n    return 1\n", "<test>"), scope)
    exec(import_cache.compile_source("def f():\n    return 2\n", "<test>"), scope)
    assert scope["f"]() == 2
    import_cache.save()
    monkeypatch.setattr(import_cache, "_entries", None)  # as a new process: from the file
    monkeypatch.setattr(import_cache, "_used", {})
    code = import_cache.compile_source("def f():\n    return 1\n", "<test>")
    assert not import_cache._fresh  # served from the file
    exec(code, scope)
    assert scope["f"]() == 1
