"""The op registry and dispatcher: def / impl / fallback, key-set dispatch, redispatch, tables.

Each operator (one schema, e.g. ``add.out``) owns a table indexed by dispatch key. A call computes
the key set from its tensor arguments (their ``_ks`` bits) and the thread-local include/exclude
sets, takes the highest key that has a kernel and calls it. Backend kernels are called with the
schema's arguments; functionality kernels (boxed) get ``(op, keyset, args)`` and call
``op.redispatch(keyset, args)`` to continue below themselves.
"""
from __future__ import annotations

from .keys import (ALIAS_KEYS, FIRST_FUNCTIONALITY, NUM_KEYS, TLS_IN_USE, TOP_KEY, DispatchKey,
                   backend_key_for, keyset_names, tls)
from .schema.function import FunctionSchema
from .schema.parser import parse_schema
from ..device import CPU
from ..runtime.compile_lock import COMPILE_LOCK
from ..runtime.import_cache import compile_source

__all__ = ["FALLTHROUGH", "OperatorHandle", "define", "impl", "fallback", "get_op", "has_op",
           "all_ops", "get_fallback", "dispatch_lines",
           "table", "DispatchError", "check_writable", "readonly_error"]


class DispatchError(RuntimeError):
    pass


class _Fallthrough:
    def __repr__(self):
        return "FALLTHROUGH"


FALLTHROUGH = _Fallthrough()  # registering this at a key makes dispatch skip that key

_OPS: dict[str, "OperatorHandle"] = {}
_FALLBACKS: dict[DispatchKey, object] = {}


class OperatorHandle:
    __slots__ = ("schema", "name", "kernels", "_table", "mask", "call", "tensor_arg_positions")

    def __init__(self, schema: FunctionSchema):
        self.schema = schema
        self.name = schema.full_name
        self.kernels: dict[DispatchKey, object] = {}
        self._table = [None] * (NUM_KEYS + 1)
        self.mask = 0
        self.tensor_arg_positions = tuple(i for i, a in enumerate(schema.arguments)
                                          if a.type.base == "Tensor")
        self.call = self._first_call  # the fast entry point is generated on first use
        self._rebuild()

    def _rebuild(self):
        mask = 0
        for key in DispatchKey:
            fn = self.kernels.get(key, _FALLBACKS.get(key))
            if fn is None or fn is FALLTHROUGH:
                self._table[key] = None
                continue
            self._table[key] = fn
            mask |= 1 << key
        self._table[NUM_KEYS] = self._missing  # index -1 when no key matched
        self.mask = mask

    def _first_call(self, *args):
        # Generating every op's caller at import would dominate `import tensorlib`.
        self.call = _make_caller(self)
        return self.call(*args)

    def _missing(self, *args):
        ks = _keys_of_args(self, args)
        raise DispatchError(f"{self.name}(): no kernel registered for dispatch keys "
                            f"{keyset_names(ks) or ['(none: no tensor arguments)']}; registered: "
                            f"{sorted(k.name for k in self.kernels) or 'none'}")

    def redispatch(self, ks: int, args):
        """Calls the kernel for the highest key strictly below the current top key of ``ks``."""
        ks &= (1 << (ks.bit_length() - 1)) - 1
        return self._dispatch_keys(ks & self.mask, args)

    def _dispatch_keys(self, ks, args):
        i = ks.bit_length() - 1
        if i < FIRST_FUNCTIONALITY:
            return self._table[i](*args)
        return self._table[i](self, ks, args)

    def __repr__(self):
        return f"<op {self.name}>"


def _keys_of_args(op, args):
    ks = 0
    for i in op.tensor_arg_positions:
        a = args[i]
        if isinstance(a, (list, tuple)):
            for t in a:
                ks |= getattr(t, "_ks", 0)
        else:
            ks |= getattr(a, "_ks", 0)
    return ks


def readonly_error(op: str, arg: str, t) -> ValueError:
    """The one error for a write into a read-only tensor (NumPy's "assignment destination is
    read-only" is a ValueError too)."""
    return ValueError(
        f"{op}(): argument '{arg}' is read-only: its memory was borrowed from a buffer that may "
        f"not be written (a non-writeable NumPy array, bytes, ...); write to a copy "
        f"(x.clone()) instead")


def check_writable(t, op: str, arg: str = "self") -> None:
    """Raises readonly_error when tensor ``t`` is read-only (for writes that are not ops with a
    schema, e.g. ``__setitem__``; ops are checked by their generated entry point); otherwise
    counts the write in the storage's version (autograd's check on saved tensors)."""
    st = t._storage
    if st.readonly:
        raise readonly_error(op, arg, t)
    st.version += 1


def _check_written_list(items, op, arg):
    if items is not None:
        for t in items:
            st = getattr(t, "_storage", None)
            if st is not None:
                if st.readonly:
                    raise readonly_error(op, arg, t)
                st.version += 1


def _write_checks(op: OperatorHandle, names: list) -> list:
    """Source lines refusing read-only tensors in the arguments the schema marks as written
    (``Tensor(a!)``): the in-place ``self`` and ``out=``, and counting the write in the storage's
    version. Every op call enters through its
    generated caller, so this is the one check for writes through ops; ops without written
    arguments get no line, and a Tensor argument costs two slot reads (a zero-cost ``try`` lets
    a non-Tensor through to the kernel's own error)."""
    lines = []
    name = op.schema.name
    for i, a in enumerate(op.schema.arguments):
        if not a.is_write:
            continue
        if a.type.is_list:
            lines.append(f"    _check_written_list({names[i]}, {name!r}, {a.name!r})")
            continue
        lines += [
            "    try:",
            f"        _st = {names[i]}._storage",
            "    except AttributeError:",
            "        pass",
            "    else:",
            "        if _st.readonly:",
            f"            raise readonly_error({name!r}, {a.name!r}, {names[i]})",
            "        _st.version += 1",
        ]
    return lines


def dispatch_lines(op: OperatorHandle, names: list) -> tuple[list, dict]:
    """The dispatch of one call of ``op`` as Python source lines (function-body level, ending
    in ``return``) over its arguments spelled ``names`` (the schema's order), and the globals
    they use: the write checks, the key set from the tensor arguments and the thread-local
    sets, the table lookup and the call. Both ``op.call`` and the public functions of
    dispatch/binding.py are built from them (the public ones inline them: one Python call
    less per op). They read ``op.mask`` and ``op._table`` at each call, so registrations made
    later count. Their own names start with an underscore (no schema argument does)."""
    terms = []
    for i in op.tensor_arg_positions:
        if op.schema.arguments[i].type.is_list:
            terms.append(f"_list_keys({names[i]})")
        else:
            terms.append(f"getattr({names[i]}, '_ks', 0)")
    if not terms:
        # Factories have no tensor to dispatch on: their device argument picks the backend
        # (PyTorch's BackendSelect), CPU when absent.
        dev = [i for i, a in enumerate(op.schema.arguments) if a.type.base == "Device"]
        d = names[dev[0]] if dev else None
        terms = [f"(_CPU_KS if {d} is None or {d} is _CPU else _device_keys({d}))"] if dev else []
    keys_expr = " | ".join(terms) if terms else "0"
    params = ", ".join(names)
    lines = _write_checks(op, names) + [
        f"    _ks = {keys_expr}",
        "    if _tls_in_use[0]:",
        "        _ks = (_ks | _tls.included) & ~_tls.excluded",
        "    _ks &= _op.mask",
        "    _i = _top[_ks]",
        "    if _i < _FIRST:",
        f"        return _table[_i]({params})",
        f"    return _table[_i](_op, _ks, ({params}{',' if names else ''}))",
    ]
    scope = {"_tls": tls, "_tls_in_use": TLS_IN_USE, "_top": TOP_KEY, "_op": op,
             "_table": op._table, "_FIRST": FIRST_FUNCTIONALITY,
             "_list_keys": _list_keys, "_device_keys": _device_keys,
             "_CPU_KS": backend_key_for("cpu"), "_CPU": CPU,
             "readonly_error": readonly_error, "_check_written_list": _check_written_list}
    return lines, scope


def _make_caller(op: OperatorHandle):
    """Generates the op's entry point with the schema's exact positional parameters (fast path).
    Arguments the schema marks as written are checked for read-only tensors first."""
    names = [f"a{i}" for i in range(len(op.schema.arguments))]
    lines, scope = dispatch_lines(op, names)
    src = f"def call({', '.join(names)}):\n" + "".join(line + "\n" for line in lines)
    with COMPILE_LOCK:
        exec(compile_source(src, f"<dispatch {op.name}>"), scope)
    return scope["call"]


def _device_keys(device):
    return backend_key_for("cpu" if device is None else device.type)


def _list_keys(items):
    ks = 0
    if items is not None:
        for t in items:
            try:  # (free when nothing raises: the items are tensors after conversion)
                ks |= t._ks
            except AttributeError:
                pass
    return ks


def _resolve_keys(key) -> tuple[DispatchKey, ...]:
    if isinstance(key, str):
        if key in ALIAS_KEYS:
            return ALIAS_KEYS[key]
        try:
            return (DispatchKey[key],)
        except KeyError:
            raise ValueError(f"unknown dispatch key {key!r}; known: "
                             f"{[k.name for k in DispatchKey] + list(ALIAS_KEYS)}") from None
    if isinstance(key, DispatchKey):
        return (key,)
    raise TypeError(f"dispatch key must be a DispatchKey or its name, got {key!r}")


def define(schema) -> OperatorHandle:
    """Registers an operator schema; defining the same full name twice is an error."""
    if isinstance(schema, str):
        schema = parse_schema(schema)
    if schema.full_name in _OPS:
        raise DispatchError(f"operator {schema.full_name!r} is already defined "
                            f"(as {_OPS[schema.full_name].schema})")
    op = OperatorHandle(schema)
    _OPS[schema.full_name] = op
    return op


def get_op(name: str) -> OperatorHandle:
    try:
        return _OPS[name]
    except KeyError:
        raise DispatchError(f"no operator named {name!r} is defined") from None


def has_op(name: str) -> bool:
    return name in _OPS


def all_ops() -> list:
    """Every defined operator (e.g. for a functionality that covers them all, like autograd)."""
    return list(_OPS.values())


def impl(name: str, key, fn) -> None:
    """Registers ``fn`` (or FALLTHROUGH) as ``name``'s kernel at ``key`` (or an alias key)."""
    op = get_op(name)
    for k in _resolve_keys(key):
        if k in op.kernels and op.kernels[k] is not fn:
            raise DispatchError(f"{name}: a kernel is already registered at {k.name}")
        op.kernels[k] = fn
    op._rebuild()


def fallback(key, fn) -> None:
    """Registers a boxed kernel used at ``key`` by every op without its own kernel there."""
    for k in _resolve_keys(key):
        if k < FIRST_FUNCTIONALITY and fn is not FALLTHROUGH and fn is not None:
            raise DispatchError(f"fallback at backend key {k.name} is not supported")
        if fn is None:
            _FALLBACKS.pop(k, None)
        else:
            _FALLBACKS[k] = fn
    for op in _OPS.values():
        op._rebuild()


def get_fallback(key):
    """The boxed kernel registered at ``key`` for every op (None when there is none)."""
    (k,) = _resolve_keys(key)
    return _FALLBACKS.get(k)


def table(name: str, *, file=None) -> str:
    """Prints (and returns) the kernels registered per key for every overload of ``name``."""
    base = name.split(".")[0]
    ops = [op for full, op in sorted(_OPS.items())
           if full == name or full.split(".")[0] in (base, base + "_")]
    if not ops:
        raise DispatchError(f"table(): no operator named {name!r} is defined")
    lines = []
    for op in ops:
        lines.append(f"{op.schema}")
        for key in sorted(DispatchKey, reverse=True):
            own = op.kernels.get(key)
            fb = _FALLBACKS.get(key)
            if own is not None:
                what = "fallthrough" if own is FALLTHROUGH else f"kernel {_describe(own)}"
            elif fb is not None:
                what = "fallthrough (global)" if fb is FALLTHROUGH else f"fallback {_describe(fb)}"
            else:
                continue
            lines.append(f"  {key.name:<10} {what}")
    text = "\n".join(lines)
    print(text, file=file)
    return text


def _describe(fn) -> str:
    mod = getattr(fn, "__module__", None) or ""
    qual = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{mod}.{qual}" if mod else qual
