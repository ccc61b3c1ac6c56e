"""The last Array API gaps of issue 17 item 5, on the CPU and (interpreted) CUDA: floor_divide
with an infinite operand, complex expm1 special values, complex tanh(+-inf + iy), and repeat
with an integer tensor of repeats."""
import math

import numpy as np
import pytest

import tensorlib as tl

INF, NAN = math.inf, math.nan


def _same(got, want):
    """Bitwise-equal floats (zero signs count; nan equals nan)."""
    g, w = np.asarray(got, dtype=complex if np.iscomplexobj(want) else float), np.asarray(want)
    for a, b in ((g.real, w.real), (g.imag, w.imag)) if np.iscomplexobj(w) else ((g, w),):
        ok = ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))
        assert ok.all(), (got, want)


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    if request.param == "cuda":
        request.getfixturevalue("cuda_interpret")
    return request.param


# (x1, x2, x1 // x2) from the standard's floor_divide special cases; NumPy differs on the first
# six (nan, nan, nan, nan, -1.0, -1.0)
FLOOR_DIVIDE = [(INF, 2.0, INF), (-INF, 2.0, -INF), (INF, -2.0, -INF), (-INF, -2.0, INF),
                (1.0, -INF, -0.0), (-1.0, INF, -0.0), (1.0, INF, 0.0), (-1.0, -INF, 0.0),
                (-0.0, INF, -0.0), (INF, INF, NAN), (NAN, INF, NAN), (INF, NAN, NAN),
                (7.0, 2.0, 3.0), (1.0, 0.0, INF), (-1.0, 0.0, -INF)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_floor_divide_infinite_operands(device, dtype):
    a, b, want = (np.array(c, dtype) for c in zip(*FLOOR_DIVIDE))
    x, y = tl.asarray(a, device=device), tl.asarray(b, device=device)
    _same(tl.floor_divide(x, y).cpu().tolist(), want)
    _same((x // y).cpu().tolist(), want)
    z = x.copy()
    z //= y
    _same(z.cpu().tolist(), want)
    # Python scalar operands take the same path
    _same((x // INF).cpu().tolist(), np.floor(a / np.array(INF, dtype)))
    _same((INF // y).cpu().tolist(), np.floor(np.array(INF, dtype) / b))


def _c(re, im):
    return complex(re, im)


# (z, expm1(z)) from the standard's special cases (where it leaves a sign open, the one given
# here is NumPy's for -0 + 0j and compared without sign for the rest, see below)
EXPM1 = [(_c(0.0, 0.0), _c(0.0, 0.0)), (_c(-0.0, 0.0), _c(-0.0, 0.0)),
         (_c(1.0, INF), _c(NAN, NAN)), (_c(1.0, NAN), _c(NAN, NAN)),
         (_c(INF, 0.0), _c(INF, 0.0)), (_c(-INF, 0.0), _c(-1.0, 0.0)),
         (_c(-INF, INF), _c(-1.0, 0.0)), (_c(INF, INF), _c(INF, NAN)),
         (_c(-INF, NAN), _c(-1.0, 0.0)), (_c(INF, NAN), _c(INF, NAN)),
         (_c(NAN, 0.0), _c(NAN, 0.0)), (_c(NAN, 1.0), _c(NAN, NAN)),
         (_c(NAN, NAN), _c(NAN, NAN)), (_c(INF, -0.0), _c(INF, -0.0))]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_expm1_special_values(device, dtype):
    z = np.array([c[0] for c in EXPM1], dtype)
    got = np.asarray(tl.expm1(tl.asarray(z, device=device)).cpu().tolist())
    want = np.array([c[1] for c in EXPM1], dtype)
    unsigned = np.isnan(want.real) | np.isnan(want.imag) | (z.real == -INF)  # sign left open
    _same(np.where(unsigned, np.abs(got.real) + 1j * np.abs(got.imag), got),
          np.where(unsigned, np.abs(want.real) + 1j * np.abs(want.imag), want))
    # +inf with a nonzero finite y: +inf * cis(y) - 1
    w = tl.expm1(tl.asarray(np.array([_c(INF, 2.0), _c(INF, -0.5)], dtype), device=device))
    _same(w.cpu().tolist(), [_c(-INF, INF), _c(INF, -INF)])
    # finite values keep their accuracy
    f = np.array([0.5 + 0.25j, -1e-8 + 1e-9j, 3 - 2j], dtype)
    np.testing.assert_allclose(np.asarray(tl.expm1(tl.asarray(f, device=device)).cpu()
                                          .tolist()), np.expm1(f.astype(np.complex128)),
                               rtol=2e-6 if dtype == "complex64" else 1e-12)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_tanh_of_infinite_real_part(device, dtype):
    z = np.array([_c(INF, 2.0), _c(INF, 0.5), _c(INF, 0.0), _c(-INF, 3.0), _c(INF, -2.0),
                  _c(-INF, -0.0)], dtype)
    got = tl.tanh(tl.asarray(z, device=device)).cpu().tolist()
    _same(got, [_c(1, 0.0), _c(1, 0.0), _c(1, 0.0), _c(-1, 0.0), _c(1, -0.0), _c(-1, -0.0)])
    # y = +-inf or nan: +-1 with a zero imaginary part whose sign the standard leaves open
    z2 = np.array([_c(INF, INF), _c(INF, NAN)], dtype)
    g2 = np.asarray(tl.tanh(tl.asarray(z2, device=device)).cpu().tolist())
    assert (g2.real == 1).all() and (g2.imag == 0).all()


A = np.arange(12).reshape(3, 4)


@pytest.mark.parametrize("repeats,axis", [([2, 0, 1, 3], 1), ([1, 2, 0], 0),
                                          ([3], None), ([0] * 12, None)])
def test_repeat_with_a_tensor_of_repeats(device, repeats, axis):
    x = tl.asarray(A, device=device)
    for dtype in ("int64", "int32", "uint8"):
        r = tl.asarray(np.array(repeats, dtype), device=device)
        got = tl.repeat(x, r, axis=axis)
        want = np.repeat(A, repeats, axis=axis)
        assert got.shape == want.shape and got.cpu().tolist() == want.tolist()
    got = tl.repeat(x, np.array(repeats), axis=axis)  # a NumPy array of counts too
    assert got.cpu().tolist() == np.repeat(A, repeats, axis=axis).tolist()


def test_repeat_with_an_empty_tensor_of_repeats(device):
    x = tl.asarray(np.zeros((2, 0)), device=device)
    r = tl.asarray(np.zeros(0, np.int64), device=device)
    got = tl.repeat(x, r, axis=1)
    assert got.shape == (2, 0)
    with pytest.raises(ValueError, match=r"repeat\(\): argument 'repeats'"):
        tl.repeat(tl.asarray(A, device=device), r, axis=1)  # 0 counts for 4 elements


def test_repeat_bad_repeats():
    x = tl.asarray(A)
    with pytest.raises(ValueError, match=r"repeat\(\): argument 'repeats' must be "
                                         r"non-negative"):
        tl.repeat(x, tl.asarray(np.array([1, -1, 0, 2])), axis=1)
    with pytest.raises(TypeError, match=r"repeat\(\): argument 'repeats'"):
        tl.repeat(x, tl.asarray(np.array([1.0, 2.0, 0.0, 1.0])), axis=1)
    with pytest.raises(TypeError, match=r"repeat\(\): argument 'repeats'"):
        tl.repeat(x, tl.asarray(np.ones((2, 2), np.int64)), axis=1)
