"""``tl.nn``: neural-network building blocks. ``tl.nn.functional`` holds the stateless
functions (activations, linear, dropout, losses), made of differentiable tensorlib ops."""
from . import functional

__all__ = ["functional"]
