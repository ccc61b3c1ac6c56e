"""``tl.optim``: SGD, Adam and AdamW whose ``step()`` updates every parameter of one
(device, dtype) with a single fused kernel (Numba on the CPU, Triton on CUDA; see _fused.py)."""
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
