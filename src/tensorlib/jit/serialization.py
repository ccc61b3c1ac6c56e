"""tl.jit.save / tl.jit.load: a traced function as a versioned file.

Layout: the magic ``TLJIT\\0``, a little-endian u32 format version, a u64 header length, the
header (UTF-8 JSON: function name, argument names, output kind, the traced graph with every
value's type and every constant), then the tensor constants' raw bytes (C order) back to back.
The traced graph is stored, not a specialization: the loader's executor specializes again for
whatever it is called with. Every field is checked on load; a bad, truncated or newer file is a
ValueError naming the file.
"""
from __future__ import annotations

import json

import os
import struct

import numpy as np

from .. import dtypes as _dt
from ..device import Device
from ..tensor import Tensor
from .interpreter import value_order
from .ir import Graph, LintError, ScalarKind, TensorType

__all__ = ["save", "load", "FORMAT_VERSION"]

MAGIC = b"TLJIT\0"
FORMAT_VERSION = 1
_HEAD = struct.Struct("<6sIQ")


def _type_json(t):
    if isinstance(t, TensorType):
        return {"tensor": t.to_json()}
    return {"kind": t.name}


def _type_from(d):
    if "tensor" in d:
        return TensorType.from_json(d["tensor"])
    return ScalarKind(str(d["kind"]))


class _Encoder:
    def __init__(self):
        self.tensors = []  # (meta, bytes)

    def value(self, v, where):
        if v is None or isinstance(v, (bool, str)):
            return {"v": v}
        if isinstance(v, int):
            return {"int": str(v)}
        if isinstance(v, float):
            return {"float": v.hex()}
        if isinstance(v, complex):
            return {"complex": [v.real.hex(), v.imag.hex()]}
        if isinstance(v, (list, tuple)):
            return {"list" if isinstance(v, list) else "tuple": [self.value(x, where) for x in v]}
        if isinstance(v, _dt.DType):
            return {"dtype": v.name}
        if isinstance(v, Device):
            return {"device": str(v)}
        if isinstance(v, Tensor):
            arr = np.ascontiguousarray(v._to_host_numpy())
            self.tensors.append(({"dtype": v._dtype.name, "shape": list(v.shape),
                                  "host": arr.dtype.str, "device": str(v.device),
                                  "nbytes": arr.nbytes}, arr.tobytes()))
            return {"tensor": len(self.tensors) - 1}
        raise ValueError(f"save(): {where} holds a {type(v).__name__} constant, which cannot "
                         f"be saved (e.g. a Generator captured by a random op)")


def save(traced, path) -> None:
    """Writes ``traced`` (a TracedFunction, or a loaded one) to ``path``."""
    from .executor import TracedFunction
    if not isinstance(traced, TracedFunction):
        raise TypeError(f"save(): argument 'traced' must be a TracedFunction, got "
                        f"{type(traced).__name__}")
    g = traced.graph
    enc = _Encoder()
    index = {v: i for i, v in enumerate(value_order(g))}
    nodes = []
    for n in g.nodes:
        attrs = {k: enc.value(v, f"node {n.kind}") for k, v in n.attrs.items()
                 if k != "subgraph"}
        nodes.append({"kind": n.kind, "inputs": [index[i] for i in n.inputs],
                      "outputs": [_type_json(o.type) for o in n.outputs],
                      "ids": [o.unique for o in n.outputs], "attrs": attrs})
    header = {"name": traced.name, "out_kind": traced._out_kind,
              "arg_names": list(traced._arg_names),
              "inputs": [{"name": v.debug_name, "id": v.unique, "type": _type_json(v.type)}
                         for v in g.inputs],
              "nodes": nodes, "outputs": [index[o] for o in g.outputs],
              "tensors": [m for m, _ in enc.tensors]}
    blob = json.dumps(header).encode()
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(_HEAD.pack(MAGIC, FORMAT_VERSION, len(blob)))
        f.write(blob)
        for _, data in enc.tensors:
            f.write(data)
    os.replace(tmp, path)


class _Decoder:
    def __init__(self, tensors):
        self.tensors = tensors

    def value(self, d):
        if not isinstance(d, dict) or len(d) != 1:
            raise ValueError(f"bad constant {d!r}")
        (k, v), = d.items()
        if k == "v":
            return v
        if k == "int":
            return int(v)
        if k == "float":
            return float.fromhex(v)
        if k == "complex":
            return complex(float.fromhex(v[0]), float.fromhex(v[1]))
        if k == "list":
            return [self.value(x) for x in v]
        if k == "tuple":
            return tuple(self.value(x) for x in v)
        if k == "dtype":
            return _dt.to_dtype(v)
        if k == "device":
            return Device(v)
        if k == "tensor":
            return self.tensors[v]
        raise ValueError(f"unknown constant kind {k!r}")


def _tensor_from(meta, data):
    from ..ops.creation import asarray
    arr = np.frombuffer(data, dtype=np.dtype(meta["host"])).reshape(meta["shape"])
    t = asarray(arr.copy())
    dtype = _dt.to_dtype(meta["dtype"])
    if t.dtype is not dtype:
        t = t.astype(dtype)
    if meta["device"] != "cpu":
        t = t.to(meta["device"])
    return t


def load(path):
    """Reads a file written by ``save``; returns a callable TracedFunction."""
    from .executor import TracedFunction
    where = f"load(): '{os.fspath(path)}'"
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < _HEAD.size or raw[:6] != MAGIC:
        raise ValueError(f"{where} is not a tensorlib JIT file (bad magic)")
    _, version, hlen = _HEAD.unpack_from(raw)
    if version > FORMAT_VERSION:
        raise ValueError(f"{where} has format version {version}, newer than this tensorlib "
                         f"reads ({FORMAT_VERSION}); upgrade tensorlib")
    if version < 1:
        raise ValueError(f"{where} has an invalid format version {version}")
    end = _HEAD.size + hlen
    if len(raw) < end:
        raise ValueError(f"{where} is truncated (header needs {hlen} bytes, "
                         f"{len(raw) - _HEAD.size} present)")
    try:
        h = json.loads(raw[_HEAD.size:end].decode())
        pos = end
        tensors = []
        for meta in h["tensors"]:
            n = int(meta["nbytes"])
            if len(raw) < pos + n:
                raise ValueError(f"truncated: tensor data needs {pos + n} bytes, the file has "
                                 f"{len(raw)}")
            tensors.append(_tensor_from(meta, raw[pos:pos + n]))
            pos += n
        if pos != len(raw):
            raise ValueError(f"{len(raw) - pos} unexpected trailing bytes")
        dec = _Decoder(tensors)
        g = Graph()
        vals = []
        for i in h["inputs"]:
            vals.append(g.add_input(_type_from(i["type"]), i["name"]))
            vals[-1].unique = int(i["id"])
        for nd in h["nodes"]:
            attrs = {k: dec.value(v) for k, v in nd["attrs"].items()}
            node = g.create(nd["kind"], [vals[i] for i in nd["inputs"]],
                            [_type_from(t) for t in nd["outputs"]], **attrs)
            for o, uid in zip(node.outputs, nd["ids"], strict=True):
                o.unique = int(uid)
            g.append(node)
            vals += node.outputs
        g.outputs = [vals[i] for i in h["outputs"]]
        g.continue_numbering(max((v.unique for v in vals), default=-1) + 1)
        g.lint()
        traced = TracedFunction(g, str(h["name"]), h["out_kind"], h["arg_names"])
    except ValueError as e:
        if str(e).startswith(where):
            raise
        raise ValueError(f"{where} is corrupt: {e}") from None
    except (KeyError, IndexError, TypeError, LintError, UnicodeDecodeError) as e:
        raise ValueError(f"{where} is corrupt: {type(e).__name__}: {e}") from None
    if h["out_kind"] not in ("tensor", "tuple", "list"):
        raise ValueError(f"{where} is corrupt: unknown output kind {h['out_kind']!r}")
    return traced



