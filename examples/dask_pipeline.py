"""Scaling out with Dask: a dask.array pipeline on tensorlib chunks, on a local cluster.

    PYTHONPATH=src python examples/dask_pipeline.py [--threads]

A 20000 x 600 float32 array (48 MB) in 16 chunks of 5000 x 150 goes through a pipeline of
elementwise ops, a reduction, a matrix product, integer-array indexing and a rechunk. It runs
on a ``distributed.LocalCluster`` with two worker processes (chunks travel between them by
pickle protocol 5), or with ``--threads`` on dask's threaded scheduler. The same pipeline on
NumPy chunks of the same values is the reference: the script prints both and exits non-zero
if they differ.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import dask
import dask.array as da

import tensorlib as tl


def pipeline(x):
    """Standardize each column, keep the rows with a large first feature, project onto the
    columns' Gram matrix: elementwise, reductions, advanced indexing, matmul, rechunk."""
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    score = da.tanh(z).sum(axis=1)                    # one value per row
    rows = np.flatnonzero(np.arange(x.shape[0]) % 7 == 3)  # every 7th row, from row 3
    picked = z[rows].rechunk((1000, 600))
    gram = picked.T @ picked / len(rows)              # 600 x 600 correlation estimate
    return score.max(), da.where(gram > 0.05, gram, 0).sum(), gram[:3, :3]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", action="store_true", help="threaded scheduler, no cluster")
    args = ap.parse_args(argv)

    a = np.random.default_rng(0).standard_normal((20000, 600), dtype=np.float32)
    a[:, 1] += 0.5 * a[:, 0]  # a correlated pair of columns
    x_tl = da.from_array(tl.asarray(a), chunks=(5000, 150))
    x_np = da.from_array(a, chunks=(5000, 150))
    print(f"input: {x_tl.shape} float32, {x_tl.npartitions} chunks of {x_tl.chunksize}, "
          f"chunk type {type(x_tl._meta).__module__}.{type(x_tl._meta).__name__}")

    t0 = time.perf_counter()
    if args.threads:
        got = dask.compute(*pipeline(x_tl), scheduler="threads")
        where = "threaded scheduler"
    else:
        from distributed import Client, LocalCluster
        with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            got = client.compute(list(pipeline(x_tl)), sync=True)
            where = f"LocalCluster, workers {sorted(client.scheduler_info()['workers'])}"
    elapsed = time.perf_counter() - t0
    want = dask.compute(*pipeline(x_np), scheduler="threads")

    ok = True
    for name, g, w in zip(("max row score", "sum of strong correlations", "gram[:3, :3]"),
                          got, want):
        assert isinstance(g, tl.Tensor), type(g)
        g = g.numpy()
        same = np.allclose(g, w, rtol=1e-4, atol=1e-4)
        ok &= same
        show = lambda v: np.array2string(np.asarray(v), precision=4, separator=", ",
                                         prefix="  tensorlib ")
        print(f"{name}: {'equal' if same else 'DIFFERENT'}\n  tensorlib {show(g)}\n"
              f"  NumPy     {show(w)}")
    print(f"computed on tensorlib chunks in {elapsed:.2f} s ({where})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
