"""Numba source templates of the CPU value sorts (no payload), assembled by ``_values_source``:
``_VALUES`` (helpers; ``fix_special`` writes nan / -0.0 bit patterns back), ``_VALUES_TAIL``
(short rows sorted in cache: ``vrow``, ``vrows_serial`` / ``vrows_parallel``, ``fix_rows``),
then, for 1-byte keys, the long-row template of ``sort_values_long.py``."""
from __future__ import annotations

from .sort_keys import SMALL
from .sort_values_long import _LONG_ROW

# Value sorts (no payload). Stability is only observable on nan payloads and on the sign of
# zero: keys are sorted alone and turned back into values, and a row holding nan or -0.0 gets
# its own nan / zero bit patterns written back over those runs in input order afterwards.
_VALUES = """
@njit(nogil=True, error_model='numpy')
def fix_special(src, out, desc):
    # out holds src sorted with canonical nan / +0.0 in the nan and zero runs: write src's own
    # nan and zero bit patterns back there in input order, as a stable sort leaves them
    n = src.size
    dm = ALL if desc else np.uint64(0)
    nn = 0
    nz = 0
    for i in range(n):
        a = np.uint64(src[i]) & ABSM
        if a > EXPM:
            nn += 1
        elif a == np.uint64(0):
            nz += 1
    if nn:
        j = 0 if desc else n - nn
        for i in range(n):
            if (np.uint64(src[i]) & ABSM) > EXPM:
                out[j] = src[i]
                j += 1
    if nz:
        zk = SB ^ dm
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if (tokey(out[mid]) ^ dm) < zk:
                lo = mid + 1
            else:
                hi = mid
        for i in range(n):
            if (np.uint64(src[i]) & ABSM) == np.uint64(0):
                out[lo] = src[i]
                lo += 1


@njit(inline='always', error_model='numpy')
def keys_out(a, out, dm):
    for i in range(a.size):
        out[i] = KT(unkey(np.uint64(a[i]) ^ dm))


@njit(inline='always', error_model='numpy')
def insertion(a):
    for i in range(1, a.size):
        kk = a[i]
        j = i - 1
        while j >= 0 and a[j] > kk:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = kk


@njit(inline='always', error_model='numpy')
def vpass(s, t, base, sh, mask, o):
    for i in range(s.size):
        k = s[i]
        d = ((np.uint64(k) - base) >> sh) & mask
        j = o[d]
        o[d] = j + 1
        t[j] = k


@njit(inline='always', error_model='numpy')
def exclusive(c):
    acc = 0
    for d in range(c.size):
        t = c[d]
        c[d] = acc
        acc += t
"""

_VALUES_TAIL = """
@njit(cache=True, nogil=True, error_model='numpy')
def vrow(src, out, ka, kb, cnt, desc):
    # returns the number of nan / -0.0 (then fix_special must run on the row)
    # one row (short: its keys stay in cache): keys + digit counts + nan / -0.0 + sortedness
    # in one read, LSD passes over the byte digits that vary, values written by the last pass
    n = src.size
    dm = ALL if desc else np.uint64(0)
    ns = 0
    nd = 0
    if n <= SMALLN:
        for i in range(n):
            ka[i] = KT(tokey(src[i]) ^ dm)
            ns += special(src[i])
        insertion(ka[:n])
        keys_out(ka[:n], out, dm)
    else:
ZERO8
        prev = tokey(src[0]) ^ dm
        for i in range(n):
            x = src[i]
            k = tokey(x) ^ dm
            ns += special(x)
            nd += k < prev
            prev = k
            ka[i] = KT(k)
HIST8
        if nd == 0:
            for i in range(n):
                out[i] = src[i]   # already in order: a stable sort leaves it as it is
            return ns
        s = ka[:n]
        t = kb[:n]
        for ps in range(NPASS):
            c = cnt[ps]
            if c[(np.uint64(ka[0]) >> np.uint64(8 * ps)) & U255] == n:
                continue  # every key has this digit
            exclusive(c)
            vpass(s, t, np.uint64(0), np.uint64(8 * ps), U255, c)
            s, t = t, s
        keys_out(s, out, dm)   # one sequential write of the values
    return ns   # nan / -0.0 seen: the caller runs fix_rows


@njit(cache=True, nogil=True, error_model='numpy')
def vrows_serial(src, out, rows, n, desc):
    # returns how many rows hold nan / -0.0 (the caller then runs fix_rows: compiled only
    # when some data has them)
    ka = np.empty(n, KT)
    kb = np.empty(n, KT)
    cnt = np.empty((NPASS, 256), np.int64)
    special = 0
    for r in range(rows):
        if vrow(src[r * n:(r + 1) * n], out[r * n:(r + 1) * n], ka, kb, cnt, desc):
            special += 1
    return special


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def vrows_parallel(src, out, rows, n, nch, desc):
    special = 0
    for c in prange(nch):
        ka = np.empty(n, KT)
        kb = np.empty(n, KT)
        cnt = np.empty((NPASS, 256), np.int64)
        for r in range(rows * c // nch, rows * (c + 1) // nch):
            if vrow(src[r * n:(r + 1) * n], out[r * n:(r + 1) * n], ka, kb, cnt, desc):
                special += 1
    return special


@njit(cache=True, nogil=True, error_model='numpy')
def fix_rows(src, out, rows, n, desc):
    for r in range(rows):
        fix_special(src[r * n:(r + 1) * n], out[r * n:(r + 1) * n], desc)


"""


def _values_source(width):
    """The value-sort kernels for keys of `width` bytes (unrolled digit counts)."""
    zero8 = "        cnt[:, :] = 0\n" + "\n".join(f"        c{i} = cnt[{i}]" for i in range(width))
    hist8 = "\n".join(f"            c{i}[(k >> np.uint64({8 * i})) & U255] += 1"
                       for i in range(width))
    tail = _VALUES_TAIL + (_LONG_ROW if width == 1 else "")
    tail = tail.replace("ZERO8", zero8).replace("HIST8", hist8)
    return _VALUES + tail.replace("SMALLN", str(SMALL))
