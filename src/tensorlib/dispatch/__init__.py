"""Dispatch layer: schema parser, op registry and dispatcher, DispatchStub, TensorIterator."""
from .dispatcher import FALLTHROUGH, DispatchError, define, fallback, get_op, impl, table
from .keys import DispatchKey, exclude_keys, include_keys

__all__ = ["FALLTHROUGH", "DispatchError", "DispatchKey", "define", "exclude_keys", "fallback",
           "get_op", "impl", "include_keys", "table"]
