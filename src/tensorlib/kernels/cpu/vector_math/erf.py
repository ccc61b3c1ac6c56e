"""erf on float32 / float64."""
import numpy as np

from .base import _copysign, _pow2, _vjit, bits_f64, f64_bits, fma
from .exp_log import _exp_f32d, _exp_poly13, _exp_reduce

# --------------------------------------------------------------------------
# erf
# --------------------------------------------------------------------------

# fdlibm s_erf.c's rational approximations: |x| < 0.84375: erf = x + x P(x*x) / Q(x*x);
# [0.84375, 1.25): erx + P(|x| - 1) / Q(|x| - 1); [1.25, 1/0.35) and [1/0.35, 6):
# erfc = exp(-z*z - 0.5625 + (z - |x|)(z + |x|) + R(1/x*x) / S(1/x*x)) / |x|, z = |x| with
# its low 32 bits cleared (z*z exact). The three outer regions share one rational of degree
# (7, 8) whose coefficients are selected per lane; one exp of the sum of the exponents.
_ERX = 8.45062911510467529297e-01
_EFX8 = 1.02703333676410069053e+00
_ERF_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
           -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_ERF_QQ = (3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
           1.32494738004321644526e-04, -3.96022827877536812320e-06)
# numerators (degree 7) and denominators (1 + degree 8) of the three outer regions, padded
_ERF_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
           3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
           -2.16637559486879084300e-03, 0.0)
_ERF_QA = (1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
           1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02,
           0.0, 0.0)
_ERF_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
           -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
           -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_ERF_SA = (1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
           6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
           6.57024977031928170135e+00, -6.04244152148580987438e-02)
_ERF_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
           -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
           -4.83519191608651397019e+02, 0.0)
_ERF_SB = (3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
           3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
           -2.24409524465858183362e+01, 0.0)
(_PP0, _PP1, _PP2, _PP3, _PP4) = _ERF_PP
(_QQ1, _QQ2, _QQ3, _QQ4, _QQ5) = _ERF_QQ
(_PA0, _PA1, _PA2, _PA3, _PA4, _PA5, _PA6, _PA7) = _ERF_PA
(_QA1, _QA2, _QA3, _QA4, _QA5, _QA6, _QA7, _QA8) = _ERF_QA
(_RA0, _RA1, _RA2, _RA3, _RA4, _RA5, _RA6, _RA7) = _ERF_RA
(_SA1, _SA2, _SA3, _SA4, _SA5, _SA6, _SA7, _SA8) = _ERF_SA
(_RB0, _RB1, _RB2, _RB3, _RB4, _RB5, _RB6, _RB7) = _ERF_RB
(_SB1, _SB2, _SB3, _SB4, _SB5, _SB6, _SB7, _SB8) = _ERF_SB


@_vjit
def _pick(rb, rc, pb, pc, pd):
    """The coefficient of the lane's region: pb (|x| < 1.25), pc (< 1/0.35) or pd."""
    return pb if rb else (pc if rc else pd)


@_vjit
def _exp_core(t):
    """exp(t) for t in [-700, 700] (no special values), ~0.5 ulp."""
    k, r = _exp_reduce(t)
    return (fma(r * r, _exp_poly13(r), r) + 1.0) * _pow2(k)


@_vjit
def erf_f64(x):
    a = abs(x)
    # |x| < 0.84375
    z = x * x
    pr = fma(z, fma(z, fma(z, fma(z, _PP4, _PP3), _PP2), _PP1), _PP0)
    qr = fma(z, fma(z, fma(z, fma(z, fma(z, _QQ5, _QQ4), _QQ3), _QQ2), _QQ1), 1.0)
    small = x + x * (pr / qr)
    small = small if a >= 3.725290298461914e-09 else 0.125 * (8.0 * x + _EFX8 * x)  # < 2**-28
    # 0.84375 <= |x| < 6 (beyond, erfc(6) ~ 2e-17 rounds 1 - erfc to 1)
    ac = min(a, 6.0)
    rb = ac < 1.25
    rc = ac < 2.857142857142857
    s = (ac - 1.0) if rb else 1.0 / (ac * ac)
    num = _pick(rb, rc, _PA7, _RA7, _RB7)
    num = fma(num, s, _pick(rb, rc, _PA6, _RA6, _RB6))
    num = fma(num, s, _pick(rb, rc, _PA5, _RA5, _RB5))
    num = fma(num, s, _pick(rb, rc, _PA4, _RA4, _RB4))
    num = fma(num, s, _pick(rb, rc, _PA3, _RA3, _RB3))
    num = fma(num, s, _pick(rb, rc, _PA2, _RA2, _RB2))
    num = fma(num, s, _pick(rb, rc, _PA1, _RA1, _RB1))
    num = fma(num, s, _pick(rb, rc, _PA0, _RA0, _RB0))
    den = _pick(rb, rc, _QA8, _SA8, _SB8)
    den = fma(den, s, _pick(rb, rc, _QA7, _SA7, _SB7))
    den = fma(den, s, _pick(rb, rc, _QA6, _SA6, _SB6))
    den = fma(den, s, _pick(rb, rc, _QA5, _SA5, _SB5))
    den = fma(den, s, _pick(rb, rc, _QA4, _SA4, _SB4))
    den = fma(den, s, _pick(rb, rc, _QA3, _SA3, _SB3))
    den = fma(den, s, _pick(rb, rc, _QA2, _SA2, _SB2))
    den = fma(den, s, _pick(rb, rc, _QA1, _SA1, _SB1))
    den = fma(den, s, 1.0)
    ratio = num / den
    zt = bits_f64(f64_bits(ac) & np.uint64(0xffffffff00000000))
    erfc = _exp_core((-zt * zt - 0.5625) + ((zt - ac) * (zt + ac) + ratio)) / ac
    big = (_ERX + ratio) if rb else 1.0 - erfc
    res = _copysign(big, x) if a >= 0.84375 else small
    return res if x == x else x


# float32 erf in double without divisions: erf(x) / x as a polynomial in x*x on [0, 2] and
# erfc(x) exp(x*x) as one in x - 2.96 on [2, 3.92] (beyond, erf rounds to +-1): weighted
# least-squares fits on Chebyshev nodes (numpy.polynomial.chebyshev.chebfit, degrees 11 and 8),
# errors 2**-34 and 2**-33 relative to erf.
_ERF32_A = (1.128379167076186, -0.3761263866080235, 0.11283788511681882, -0.026866017787027435,
            0.005223600469891116, -0.0008542839240880986, 0.00012004395106930932,
            -1.461044818968987e-05, 1.5132320274112885e-06, -1.2514986903037993e-07,
            7.1901976863288e-09, -2.0844691602279549e-10)
_ERF32_B = (0.18120174569543196, -0.05566479127555132, 0.016433871632034382,
            -0.004680954076267141, 0.00128990512336359, -0.00034278405176451553,
            8.941381813327248e-05, -2.572646715426493e-05, 6.189817745556125e-06)
(_EA0, _EA1, _EA2, _EA3, _EA4, _EA5, _EA6, _EA7, _EA8, _EA9, _EA10, _EA11) = _ERF32_A
(_EB0, _EB1, _EB2, _EB3, _EB4, _EB5, _EB6, _EB7, _EB8) = _ERF32_B


@_vjit
def erf_f32(x):
    xd = np.float64(x)
    a = abs(xd)
    z = xd * xd
    p = fma(z, _EA11, _EA10)
    p = fma(p, z, _EA9)
    p = fma(p, z, _EA8)
    p = fma(p, z, _EA7)
    p = fma(p, z, _EA6)
    p = fma(p, z, _EA5)
    p = fma(p, z, _EA4)
    p = fma(p, z, _EA3)
    p = fma(p, z, _EA2)
    p = fma(p, z, _EA1)
    p = fma(p, z, _EA0)
    small = xd * p
    ac = min(a, 3.92)
    t = ac - 2.96
    q = fma(t, _EB8, _EB7)
    q = fma(q, t, _EB6)
    q = fma(q, t, _EB5)
    q = fma(q, t, _EB4)
    q = fma(q, t, _EB3)
    q = fma(q, t, _EB2)
    q = fma(q, t, _EB1)
    q = fma(q, t, _EB0)
    big = _copysign(fma(-_exp_f32d(-ac * ac), q, 1.0), xd)
    res = small if a < 2.0 else big
    return np.float32(res if x == x else xd)
