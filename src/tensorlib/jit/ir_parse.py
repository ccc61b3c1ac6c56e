"""Reading the JIT IR's printed form back (``str(graph)``, fusion-group subgraphs included):
``parse_graph`` (jit/ir.py prints it)."""
from __future__ import annotations

from .. import dtypes as _dt
from .ir import TYPE_NAMES, Graph, ScalarKind, TensorType

__all__ = ["parse_graph"]

_DTYPE_OF_NAME = {v: k for k, v in TYPE_NAMES.items()}


def _split_top(text: str, sep: str = ",") -> list:
    """Splits at ``sep`` outside brackets and quotes."""
    out, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _parse_type(text: str):
    text = text.strip()
    if text == "Tensor":
        return TensorType()
    head, paren, rest = text.partition("(")
    if not paren:
        return ScalarKind(text)
    if head != "Tensor" and head not in _DTYPE_OF_NAME:
        raise ValueError(f"unknown tensor type {head!r}")
    dtype = _dt.to_dtype(_DTYPE_OF_NAME[head]) if head != "Tensor" else None
    shape, strides, device, rg = [], None, None, False
    for part in _split_top(rest[:-1]):
        if part.startswith("strides="):
            strides = [int(x) for x in _split_top(part[len("strides=["):-1])]
        elif part.startswith("device="):
            device = part[len("device="):]
        elif part.startswith("requires_grad="):
            rg = part.endswith("1")
        else:
            shape.append(None if part == "*" else int(part))
    contiguous = None
    if strides is not None:
        from ..shape import is_contiguous
        contiguous = is_contiguous(tuple(shape), tuple(strides)) if None not in shape else None
    return TensorType(dtype, shape, strides, contiguous, device, rg)


def _parse_value(text: str):
    import ast
    text = text.strip()
    if text.startswith("<"):
        raise ValueError(f"parse_graph(): cannot read the constant {text} back from text "
                         f"(tensor constants exist only in files written by tl.jit.save)")
    tree = ast.parse(text, mode="eval").body

    def ev(n):
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Tuple):
            return tuple(ev(x) for x in n.elts)
        if isinstance(n, ast.List):
            return [ev(x) for x in n.elts]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub)):
            a, b = ev(n.left), ev(n.right)
            return a + b if isinstance(n.op, ast.Add) else a - b
        if isinstance(n, ast.Name) and n.id in ("nan", "inf"):
            return float(n.id)
        if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                and n.value.id == "tensorlib"):
            return _dt.to_dtype(n.attr)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "device":
            from ..device import Device
            kw = {k.arg: ev(k.value) for k in n.keywords}
            return Device(kw["type"], kw.get("index"))
        raise ValueError(f"cannot read the constant {ast.unparse(n)!r} back from text (tensor "
                         f"constants exist only in files written by tl.jit.save)")
    return ev(tree)


def parse_graph(text: str) -> Graph:
    """Reads the printed form of a Graph (``str(graph)``, fusion-group subgraphs included)
    back; the result prints the same. Tensor constants cannot be read (ValueError)."""
    sections = []
    for line in text.splitlines():
        if line.startswith("graph(") or line.startswith("with prim::FusionGroup_"):
            sections.append([line])
        elif line.strip():
            if not sections:
                raise ValueError(f"parse_graph(): expected 'graph(', got {line!r}")
            sections[-1].append(line)
    subs = {}
    for sec in reversed(sections[1:]):
        head = sec[0]
        name = head[len("with "):head.index(" = graph(")]
        subs[name] = _parse_section(sec, len("with ") + len(name) + len(" = graph("), subs)
    return _parse_section(sections[0], len("graph("), subs)


def _parse_section(lines, start, subs) -> Graph:
    g = Graph()
    header = lines[0][start:]
    i = 1
    while not header.rstrip().endswith("):"):
        header += " " + lines[i].strip()
        i += 1
    params = header.rstrip()[:-2]
    vals = {}
    top = -1

    def name_value(v, name):
        nonlocal top
        if name.isdigit():
            v.unique = int(name)
            top = max(top, v.unique)
        else:
            v.debug_name = name
        if name in vals:
            raise ValueError(f"parse_graph(): value %{name} defined twice")
        vals[name] = v

    for p in _split_top(params):
        name, _, ty = p.partition(":")
        name_value(g.add_input(_parse_type(ty)), name.strip().lstrip("%"))
    for line in lines[i:]:
        line = line.strip()
        if line.startswith("return"):
            inner = line[len("return"):].strip()[1:-1]
            g.outputs = [vals[x.strip().lstrip("%")] for x in _split_top(inner)]
            break
        lhs, eq, rhs = line.partition(" = ")
        if not eq or not lhs.startswith("%"):
            lhs, rhs = "", line
        outs = [(o.partition(":")[0].strip().lstrip("%"), _parse_type(o.partition(":")[2]))
                for o in _split_top(lhs)] if lhs else []
        kind_end = min(i for i in (rhs.find("["), rhs.find("(")) if i >= 0)
        kind = rhs[:kind_end]
        rest = rhs[kind_end:]
        attrs = {}
        if rest.startswith("["):
            depth = 0
            for j, ch in enumerate(rest):
                depth += ch in "([{"
                depth -= ch in ")]}"
                if depth == 0:
                    break
            for a in _split_top(rest[1:j]):
                k, _, v = a.partition("=")
                attrs[k] = _parse_value(v)
            rest = rest[j + 1:]
        ins = [vals[x.strip().lstrip("%")] for x in _split_top(rest.strip()[1:-1])]
        if kind.startswith("prim::FusionGroup_"):
            attrs["subgraph"] = subs[kind]
            kind = "prim::FusionGroup"
        n = g.create(kind, ins, [t for _, t in outs], **attrs)
        for v, (name, _) in zip(n.outputs, outs):
            name_value(v, name)
        g.append(n)
    g.continue_numbering(top + 1)
    return g
