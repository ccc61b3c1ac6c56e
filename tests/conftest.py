import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

# Kernel compiles dominate first runs; property tests keep example counts modest.
settings.register_profile("tensorlib", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.load_profile("tensorlib")


def pytest_collection_modifyitems(config, items):
    from tensorlib.runtime_probe import cuda_gpu_present
    if cuda_gpu_present():
        return
    skip = pytest.mark.skip(reason="needs a real CUDA GPU (none present)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
