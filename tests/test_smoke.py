import numpy as np
from hypothesis import given

import tensorlib as tl
from helpers import arrays, broadcast_pair, check_op


@given(broadcast_pair("float32", "float32"))
def test_add_broadcast_layouts(pair):
    check_op(tl.add, np.add, *pair)


@given(arrays("int16"))
def test_negative_int16(a):
    check_op(tl.negative, np.negative, a)
