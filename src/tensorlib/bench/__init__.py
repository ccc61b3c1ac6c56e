"""``python -m tensorlib.bench`` (also the ``tensorlib-bench`` script): tensorlib against
NumPy on the CPU or CuPy/nvmath-python on CUDA, with rooflines, a results table, results.json,
plots and ``--compare``. See docs/benchmarks.md.

Nothing here is imported by ``import tensorlib``; rich and matplotlib are imported only when a
run draws its progress bar, table or plots.
"""


def main(argv=None) -> int:
    from .cli import main as _main
    return _main(argv)


__all__ = ["main"]
