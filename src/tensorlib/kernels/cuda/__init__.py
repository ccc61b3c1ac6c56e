"""CUDA kernels (Triton) register into the DispatchStub tables here; none exist yet, so every
CUDA op raises UnsupportedKernelError naming the op and device."""
