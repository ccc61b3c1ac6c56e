"""Ahead-of-time compile check (kernels/cuda/aot.py): a small subset of the registered CUDA
kernels compiled to cubin for sm_80 and sm_90 without a GPU, plus the report's exit codes."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlib as tl
from helpers import ptxas_available
from tensorlib.runtime.cuda import context


@pytest.mark.skipif(not ptxas_available(), reason="Triton's ptxas is not available")
def test_quick_subset_compiles_without_spills():
    src = os.path.dirname(os.path.dirname(tl.__file__))
    env = dict(os.environ)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("TRITON_INTERPRET", None)
    env.pop("TENSORLIB_CUDA_BACKEND", None)
    proc = subprocess.run(
        [sys.executable, "-m", "tensorlib.kernels.cuda.aot", "--quick", "--arch", "sm_80,sm_90",
         "--jobs", "2"], capture_output=True, text=True, env=env, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out[-4000:] + proc.stderr[-4000:]
    lines = out.splitlines()
    assert lines[0].split() == ["kernel", "config", "arch", "regs", "spills", "smem", "secs"]
    rows = [ln.split() for ln in lines[2:] if ln.strip() and not ln[0].isdigit()
            and (ln.split()[0] in ("add", "divide", "floor_divide", "exp", "where", "equal",
                                   "bitwise_left_shift", "copy", "fill", "fill_range", "matmul")
                 or ln.split()[0].startswith("jit_fused_"))]
    kernels = {r[0] for r in rows}
    assert {"add", "copy", "fill", "fill_range", "matmul"} <= kernels
    # tl.jit's fused kernels: pointwise, rows (softmax / row norm), all-axes stages 1 and 2
    assert {"jit_fused_gelu", "jit_fused_softmax", "jit_fused_rownorm", "jit_fused_sum_all",
            "jit_fused_sum_all_fin", "jit_fused_max_all", "jit_fused_max_all_fin"} <= kernels
    archs = {c for r in rows for c in r if c.startswith("sm_")}
    assert archs == {"sm_80", "sm_90"}
    summary = [ln for ln in lines if "compiles (" in ln][0]
    assert "0 with spills, 0 errors" in summary


def test_report_exit_codes(capsys):
    from tensorlib.kernels.cuda import aot
    ok = {"kernel": "add", "config": "float32 contig", "arch": "sm_90", "regs": 26, "spills": 0,
          "smem": 0, "seconds": 0.1, "error": None}
    assert aot._report([ok], 0.1, False) == 0
    assert aot._report([dict(ok, spills=8)], 0.1, False) == 1
    assert aot._report([dict(ok, error="CompilationError: boom")], 0.1, False) == 1
    assert aot._report([], 0.0, False) == 1
    out = capsys.readouterr().out
    assert "SPILL add [float32 contig] sm_90: 8 bytes" in out
    assert "ERROR add [float32 contig] sm_90: CompilationError: boom" in out
    with pytest.raises(SystemExit):
        aot._parse_arch("sm_eighty")
    assert aot._parse_arch("sm_80, sm_90a,90") == [80, 90, 90]


@pytest.fixture
def interpret_memory(monkeypatch):
    monkeypatch.setenv("TENSORLIB_CUDA_BACKEND", "interpret")
    monkeypatch.setenv("TENSORLIB_CUDA_MEMORY", str(1 << 28))
    monkeypatch.delenv("TENSORLIB_CUDA_ALLOC_CONF", raising=False)
    context.reset()
    yield
    context.reset()


@pytest.mark.skipif(not ptxas_available(), reason="Triton's ptxas is not available")
def test_compiled_launch_path_builds_arguments_that_compile(interpret_memory, monkeypatch):
    """The compiled (real GPU) launch path, without a GPU: ops run with the compiled mode
    forced and the launch captured; each captured (kernel, arguments, constexprs) is then
    compiled for sm_90 with the signature Triton's JIT would derive from those arguments."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import mangle_type
    from tensorlib.kernels.cuda import launch

    captured = []
    monkeypatch.setattr(launch, "_forced", "compiled")
    monkeypatch.setattr(launch, "launch", lambda kernel, grid, args, device, **kw:
                        captured.append((kernel, grid, args, kw)))
    x = tl.asarray(np.ones((4, 6), np.float32), device="cuda")
    h = x.astype(tl.bfloat16)  # copy f32 -> bf16 (captured, not run)
    i8 = tl.asarray(np.ones((4, 6), np.int8), device="cuda")
    tl.add(h.T, h.T, alpha=2)
    tl.where(x > 0, x, 1.5)
    tl.full((3,), 2.5, dtype=tl.float16, device="cuda")
    tl.arange(5, dtype=tl.int32, device="cuda")
    tl.matmul(h, h.T)
    tl.matmul(i8, i8.T)
    tl.matmul(x.astype(tl.int64), x.T.astype(tl.int64))
    tl.sum(x, axis=1)
    tl.var(x, axis=0)
    tl.any(x)
    # cross_entropy's fused pair: forward + finish ('mean'), forward alone ('none'), backward
    from tensorlib.ops import cross_entropy as xent
    tgt = tl.asarray(np.array([0, 5, 2, 1]), device="cuda")
    for reduction in ("mean", "none"):
        try:
            xent.cross_entropy_forward(h, tgt, reduction)
        except xent.TargetIndexError:
            pass  # its bad-target flag was never cleared: the fill was captured, not run
    stats = tl.empty((4, 2), dtype=tl.float32, device="cuda")
    xent.cross_entropy_backward(tl.ones((4,), dtype=tl.bfloat16, device="cuda"), h, tgt, stats,
                                "none")
    assert {"forward", "finish", "backward"} <= {k.fn.__name__ for k, *_ in captured}
    assert len(captured) >= 12
    compiled = set()
    for kernel, grid, args, kw in captured:
        assert all(isinstance(g, int) and g > 0 for g in grid)
        options = {k: kw[k] for k in ("num_warps", "num_stages", "enable_fp_fusion") if k in kw}
        const = {k: v for k, v in kw.items() if k not in options}
        sig = {}
        names = kernel.arg_names
        for name, value in zip(names, args):
            sig[name] = mangle_type(value)
        for name in names:
            if name in const:
                sig[name] = "constexpr"
        assert set(sig) == set(names), (kernel, set(names) - set(sig))
        key = (kernel, tuple(sorted(sig.items())), tuple(sorted(map(str, const.items()))))
        if key in compiled:
            continue
        compiled.add(key)
        triton.compile(ASTSource(kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                       options=options)
