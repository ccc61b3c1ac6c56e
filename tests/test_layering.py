"""Layers call only downward: every import in src/tensorlib (module level and inside functions)
is checked against the declared layer order (docs/ARCHITECTURE.md, "Layers").

An import of a higher layer fails the test, naming both files, unless it is listed in
KNOWN_UPWARD with its reason. That list is debt being paid off (issue 14): an entry whose
import is gone fails too, so the list only shrinks and always matches the code.
"""
from __future__ import annotations

import ast
import os

import pytest

SRC = os.path.join(os.path.dirname(__file__), "..", "src")

# bottom to top; a module belongs to the layer of its longest matching prefix
LAYERS = [
    ("base", ["tensorlib.dtypes", "tensorlib.dtype_table", "tensorlib.dtype_promotion",
              "tensorlib.dtype_info", "tensorlib.dtype_scalars", "tensorlib.device",
              "tensorlib.formatting", "tensorlib.dispatch.keys", "tensorlib.shape"]),
    ("runtime", ["tensorlib.runtime"]),
    ("tensor", ["tensorlib.storage", "tensorlib.tensor", "tensorlib.streams", "tensorlib.cuda",
                "tensorlib.cpu", "tensorlib.allocation"]),
    # the TensorIterator: broadcasting, type promotion, output allocation, loop layout
    ("iterator", ["tensorlib.iterator"]),
    ("dispatch", ["tensorlib.dispatch"]),
    ("kernels", ["tensorlib.kernels"]),
    ("ops", ["tensorlib.ops", "tensorlib.factories", "tensorlib.linalg", "tensorlib.random",
             "tensorlib.dlpack", "tensorlib.serialization"]),
    # reverse-mode autograd: records ops through the dispatcher, its formulas call ops
    ("autograd", ["tensorlib.autograd"]),
    # the AOT compiler (python -m tensorlib.kernels.cuda.aot) is a tool over the whole library:
    # it builds tensors and captures op calls; kernel modules list their jobs without it
    ("api", ["tensorlib", "tensorlib.profiler", "tensorlib.array_api_info", "tensorlib.warmup",
             "tensorlib.bench", "tensorlib.kernels.cuda.aot"]),
]

KNOWN_UPWARD: dict = {}  # (importer, imported) -> reason; paid off: keep it empty


def _module_name(path):
    rel = os.path.relpath(path, SRC)[:-3].replace(os.sep, ".")
    return rel[:-len(".__init__")] if rel.endswith(".__init__") else rel


def _is_module(name):
    path = os.path.join(SRC, *name.split("."))
    return os.path.exists(path + ".py") or os.path.isdir(path)


def _imports():
    """(importing module, imported module, line) for every tensorlib import in src/."""
    found = []
    for folder, _, files in os.walk(os.path.join(SRC, "tensorlib")):
        for file in files:
            if not file.endswith(".py"):
                continue
            path = os.path.join(folder, file)
            mod = _module_name(path)
            package = mod if file == "__init__.py" else mod.rsplit(".", 1)[0]
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                        target = ".".join(parts + ([node.module] if node.module else []))
                    else:
                        target = node.module or ""
                    for alias in node.names:  # `from pkg import submodule` imports the module
                        sub = f"{target}.{alias.name}"
                        found.append((mod, sub if _is_module(sub) else target, node.lineno))
                elif isinstance(node, ast.Import):
                    found += [(mod, a.name, node.lineno) for a in node.names]
    return [(m, t, ln) for m, t, ln in found if t == "tensorlib" or t.startswith("tensorlib.")]


def layer_of(module):
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and \
                    (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    if best is None:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")
    return best[0]


def _upward():
    edges = {}
    for src, dst, line in _imports():
        if layer_of(dst) > layer_of(src):
            edges.setdefault((src, dst), []).append(line)
    return edges


def test_every_module_has_a_layer():
    for src, dst, _ in _imports():
        layer_of(src)
        layer_of(dst)


def test_imports_only_call_down():
    new = {edge: lines for edge, lines in _upward().items() if edge not in KNOWN_UPWARD}
    assert not new, "imports of a higher layer:\n" + "\n".join(
        f"  {src} ({LAYERS[layer_of(src)][0]}) imports {dst} ({LAYERS[layer_of(dst)][0]}) "
        f"at line(s) {lines}" for (src, dst), lines in sorted(new.items()))


def test_known_exceptions_still_exist():
    gone = sorted(set(KNOWN_UPWARD) - set(_upward()))
    assert not gone, f"remove these paid-off entries from KNOWN_UPWARD: {gone}"


@pytest.mark.parametrize("src,dst,layer_src,layer_dst", [
    ("tensorlib.kernels.cpu.pointwise", "tensorlib.ops.views", "kernels", "ops"),
    ("tensorlib.ops.transfer", "tensorlib.ops.copy", "ops", "ops"),
    ("tensorlib.iterator", "tensorlib.allocation", "iterator", "tensor"),
    ("tensorlib.dispatch.keys", "tensorlib.dtypes", "base", "base"),
])
def test_layer_map(src, dst, layer_src, layer_dst):
    # the map itself: longest prefix wins (dispatch.keys is data)
    assert LAYERS[layer_of(src)][0] == layer_src and LAYERS[layer_of(dst)][0] == layer_dst
