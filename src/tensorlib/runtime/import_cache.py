"""What ``import tensorlib`` computes from its own files, kept across processes.

Every import parses ops.yaml and derivatives.yaml and compiles ~200 generated Python functions
(the dispatch entry points, the public bindings, the autograd records and formulas). Measured on
this project's 2-core VM (2026-12-05): ~20 ms of YAML parsing and ~28 ms of ``compile`` in an
import of ~150 ms. Both results depend only on their input text, so they are kept in one file
under ``$TENSORLIB_CACHE_DIR`` (default ``~/.cache/tensorlib``), keyed by a digest of that text:
a parsed YAML file comes back from a pickle, a compiled source from ``marshal``. An edited file
or generator gives new text, so a new key, never a stale result.

The file (runtime/cache_files.py: digest-checked, written whole) is written by :func:`save`
when this process met new text; it then holds only the entries this process used, so entries of
older versions drop out. A damaged file is ignored; each Python version has its own.
"""
from __future__ import annotations

import importlib.util
import marshal
import os
import pickle
import sys
import threading

from .cache_files import cache_root, digest, read_checked, write_checked

__all__ = ["compile_source", "load_yaml", "save"]

_lock = threading.Lock()
_entries: dict | None = None  # digest -> bytes, read from the file on first use
_used: dict = {}               # what this process looked up or made
_fresh = False                 # an entry was made here: save() writes the file
_TAG = f"{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}"


def _path() -> str:
    return os.path.join(cache_root(), f"import-{_TAG}.pkl")


def _load_entries() -> dict:
    payload = read_checked(_path())
    try:
        entries = pickle.loads(payload) if payload is not None else {}
    except Exception:  # noqa: BLE001 - foreign contents: start empty
        return {}
    return entries if isinstance(entries, dict) else {}


def _lookup(key: str):
    global _entries
    with _lock:
        if _entries is None:
            _entries = _load_entries()
        data = _entries.get(key)
        if data is not None:
            _used[key] = data
        return data


def _store(key: str, data: bytes) -> None:
    global _fresh
    with _lock:
        _used[key] = data
        _fresh = True


def compile_source(src: str, filename: str):
    """``compile(src, filename, "exec")``, from the cache when this text was compiled before."""
    key = "code:" + digest(f"{filename}\0{src}".encode())
    data = _lookup(key)
    if data is not None:
        try:
            return marshal.loads(data)
        except (ValueError, EOFError, TypeError):
            pass  # damaged entry: compile anew
    code = compile(src, filename, "exec")
    _store(key, marshal.dumps(code))
    return code


def load_yaml(path: str):
    """The YAML document at ``path`` (safe loader), parsed once per content."""
    with open(path, "rb") as f:
        text = f.read()
    key = "yaml:" + digest(text)
    data = _lookup(key)
    if data is not None:
        try:
            return pickle.loads(data)
        except Exception:  # noqa: BLE001 - damaged entry: parse anew
            pass
    import yaml
    # libyaml's loader is ~10x faster than the pure-Python one
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(text, Loader=loader)
    _store(key, pickle.dumps(doc, protocol=4))
    return doc


def save() -> None:
    """Writes the entries this process used when it made new ones (no-op otherwise, and where
    the cache directory is not writable)."""
    global _fresh
    with _lock:
        if not _fresh:
            return
        entries = dict(_used)
        _fresh = False
    write_checked(_path(), pickle.dumps(entries, protocol=4))
