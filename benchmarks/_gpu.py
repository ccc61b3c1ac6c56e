"""Shared start of the GPU benchmark scripts: whether they can run here."""
import sys


def gpu_unavailable(script: str):
    """None when tensorlib can use a real CUDA GPU; else the exit code the script returns:
    0 (with one line on stdout) when there is no GPU, 1 when a GPU is present but unusable."""
    from tensorlib.runtime.cuda.probe import cuda_gpu_present
    if not cuda_gpu_present():
        print("no CUDA GPU present: skipped")
        return 0
    import tensorlib as tl
    if tl.cuda.backend() != "real":
        from tensorlib.runtime.cuda import context
        print(f"{script}: a GPU is present but tensorlib cannot use it "
              f"({context.unavailable_reason()})", file=sys.stderr)
        return 1
    return None
