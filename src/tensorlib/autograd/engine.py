"""The backward engine: dependency-counted, iterative execution of the graph.

One pass finds every node reachable from the roots (and, with ``inputs``, only those on a path to
one of them) and counts how many edges enter each; a node runs once all of its consumers have
sent their gradients, so no recursion is involved and a chain of any length runs in a loop.
Gradients reaching the same (node, output) are summed in that node's input buffer. Without
retain_graph a node drops its saved tensors as soon as it has run.
"""
from __future__ import annotations

from ..dispatch.keys import AUTOGRAD_BIT, set_tls_keys, tls
from .graph import AccumulateGrad, donating

__all__ = ["run_backward", "set_node_observer"]

# A context-manager factory called with each node's name around its backward (the profiler sets
# it while it runs, so backward nodes appear in traces; None: no cost).
_NODE_OBSERVER = [None]


def set_node_observer(factory) -> None:
    _NODE_OBSERVER[0] = factory


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _reachable(roots, targets):
    """Nodes reachable from ``roots`` (restricted to those leading to ``targets`` when given),
    and how many edges from those nodes enter each."""
    deps, stack = {}, []
    for n in roots:
        if n is not None and n not in deps:
            deps[n] = 0
            stack.append(n)
    if targets is None:
        # one walk: a node is expanded once (when first seen), so each edge counts once
        while stack:
            for nxt, _ in stack.pop().next_functions:
                if nxt is not None:
                    if nxt in deps:
                        deps[nxt] += 1
                    else:
                        deps[nxt] = 1
                        stack.append(nxt)
        return deps
    order = list(deps)
    seen = set(order)
    while stack:
        n = stack.pop()
        for nxt, _ in n.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
                stack.append(nxt)
    # A node is needed when it is a target or feeds a needed node; repeat until nothing
    # changes (one pass suffices for a DAG discovered depth-first, the loop covers diamonds).
    needed = set(targets) & seen
    changed = True
    while changed:
        changed = False
        for n in reversed(order):
            if n in needed:
                continue
            for nxt, _ in n.next_functions:
                if nxt in needed:
                    needed.add(n)
                    changed = True
                    break
    deps = {n: 0 for n in order if n in needed}
    for n in deps:
        for nxt, _ in n.next_functions:
            if nxt is not None and nxt in deps:
                deps[nxt] += 1
    return deps


def run_backward(roots, root_grads, *, retain_graph: bool, create_graph: bool,
                 capture=None, accumulate: bool = True):
    """Runs the graph from ``roots`` ((node, output number) pairs) seeded with ``root_grads``.

    ``capture``: {(node, output number): index} whose incoming gradient is returned in a list
    instead of flowing on (``autograd.grad``); then leaves accumulate only when ``accumulate``.
    """
    targets = None if capture is None else {n for n, _ in capture}
    deps = _reachable([n for n, _ in roots], targets)
    buffers = {}
    for (node, nr), g in zip(roots, root_grads):
        if node is None or node not in deps:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = _add(buf[nr], g)
    captured = None if capture is None else [None] * len(capture)
    # (node, its gradients or None: then they are in buffers) once all its consumers ran
    ready = [(n, None) for n in buffers if deps[n] == 0]
    observer = _NODE_OBSERVER[0]
    prev_excluded = tls.excluded
    mode = prev_excluded & ~AUTOGRAD_BIT if create_graph else prev_excluded | AUTOGRAD_BIT
    set_tls_keys(tls.included, mode)
    prev_donating = getattr(donating, "on", False)
    donating.on = not retain_graph and not create_graph
    try:
        while ready:
            node, grads = ready.pop()
            if grads is None:
                grads = buffers.pop(node, None)
                if grads is None:
                    grads = [None] * node.num_outputs
            if node.tensor_pre_hooks is not None or (type(node) is AccumulateGrad
                                                     and node.pre_hooks(0)):
                grads = _run_hooks(node, grads)
            if capture is not None:
                for nr in range(len(grads)):
                    idx = capture.get((node, nr))
                    if idx is not None:
                        captured[idx] = _add(captured[idx], grads[nr])
                if type(node) is AccumulateGrad and not accumulate:
                    continue
            nexts = node.next_functions
            if grads[0] is None and (len(grads) == 1 or all(g is None for g in grads)):
                out = (None,) * len(nexts)
            elif observer is not None:
                with observer(node.name()):
                    out = _apply_on_stream(node, grads)
            elif node.stream is None:
                out = node.apply(grads)
                if len(out) != len(nexts):
                    raise RuntimeError(f"{node.name()}: backward returned {len(out)} "
                                       f"gradients, expected {len(nexts)}")
            else:
                out = _apply_on_stream(node, grads)
            if not retain_graph:
                node.release()
            for (nxt, nr), g in zip(nexts, out):
                if nxt is None:
                    continue
                left = deps.get(nxt)
                if left is None:
                    continue  # not on a path to the requested inputs
                deps[nxt] = left - 1
                if left == 1 and nxt.num_outputs == 1 and nxt not in buffers:
                    ready.append((nxt, [g]))  # its only gradient: no buffer to fill
                    continue
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt.num_outputs
                        buf[nr] = g
                    else:
                        buf[nr] = _add(buf[nr], g)
                if left == 1:
                    ready.append((nxt, None))
            # Drop this step's references: a gradient reaching a leaf may then be kept as its
            # .grad without a copy when nothing else refers to it (graph.accumulate_into).
            out = g = buf = grads = None
    finally:
        set_tls_keys(tls.included, prev_excluded)
        donating.on = prev_donating
    return captured


def _apply_on_stream(node, grads):
    if node.stream is None:
        out = node.apply(grads)
    else:
        from ..streams import stream as _use_stream  # a CUDA op's backward runs on its stream
        with _use_stream(node.stream):
            out = node.apply(grads)
    n = len(node.next_functions)
    if len(out) != n:
        raise RuntimeError(f"{node.name()}: backward returned {len(out)} gradients, expected {n}")
    return out


def _run_hooks(node, grads):
    for nr in range(len(grads)):
        hooks = node.pre_hooks(nr)
        if not hooks:
            continue
        g = grads[nr]
        for hook in list(hooks):
            if g is None:
                break
            new = hook(g)
            if new is not None:
                g = new
        grads[nr] = g
    return grads
