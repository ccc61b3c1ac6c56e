"""Source of the CPU value sort of many short rows by a bitonic sorting network, vectorized
across rows (part of the generated sorting module of kernels/cpu/sorting.py).

Numba has no SIMD types and its SLP vectorizer is off, so the lanes are rows: a group of
G = 32 // width rows (one 256-bit vector of keys) is transposed into T[i * G + g] = key of row
g's element i, padded with all-ones keys to N = a power of two rows, and every compare-exchange
of the network is a loop over the G lanes that LLVM's loop vectorizer turns into one vector
min and one vector max. Blocks of W = 16 rows are sorted (Batcher's odd-even merge sort) and
merged (the last four half-cleaner layers) with their 16 vectors in registers; the wider
half-cleaner layers are flat loops over two contiguous row ranges. Blocks alternate direction
(plain bitonic), so every layer compares row i with row i + j and no layer reverses rows.

A network is not stable; with plain keys (the invertible transform) that only shows on
floats: nan payloads and -0.0 / 0.0 order, and negative nans sort first. So floats are
transposed with plain, branch-free keys, and each sorted lane is checked for nan (its first or
last key beyond -inf / +inf) and -0.0 (a binary search): a group holding one is sorted again
from canonical keys (tokey) and its special rows get fix_special, as the radix paths do.
Indices are unsigned (Numba then emits no negative-index wraparound, which would hide the
constant strides from the vectorizer).

Names used from the module: KT, ALL, SB, ABSM, EXPM, BITS, FLOAT, tokey, fix_special.
"""
from __future__ import annotations

__all__ = ["network_source", "lanes", "W"]

W = 16  # rows of a block sorted / merged in registers


def lanes(width):
    """Rows sorted together (vector lanes) for keys of `width` bytes."""
    return 32 // width


def _oddeven_merge_sort(n):
    """Batcher's odd-even merge sort comparators (i < j: min to i) for n = 2**k."""
    out = []
    p = 1
    while p < n:
        k = p
        while k >= 1:
            j = k % p
            while j + k < n:
                for i in range(min(k, n - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        out.append((i + j, i + j + k))
                j += 2 * k
            k //= 2
        p *= 2
    return out


def _half_cleaners(n):
    """Layers of strides n/2 .. 1 (i with i + j): sorts a bitonic block of n."""
    out = []
    j = n // 2
    while j >= 1:
        for grp in range(0, n, 2 * j):
            out.extend((grp + t, grp + t + j) for t in range(j))
        j //= 2
    return out


def _block(name, comps, desc):
    # the g loop is the vector loop: x{i} is row i's vector, constant strides
    s = (f"@njit(inline='always', error_model='numpy')\ndef {name}(T, base0):\n"
         "    base = np.uint64(base0)\n    for g0 in range(NG):\n        g = np.uint64(g0)\n")
    s += "".join(f"        x{i} = T[base + np.uint64({i} * NG) + g]\n" for i in range(W))
    for a, b in comps:
        if desc:
            a, b = b, a
        s += f"        x{a}, x{b} = min(x{a}, x{b}), max(x{a}, x{b})\n"
    s += "".join(f"        T[base + np.uint64({i} * NG) + g] = x{i}\n" for i in range(W))
    return s + "\n\n"


def _key_fns(kind):
    # branch-free plain key and its inverse (the module's tokey_plain / unkey branch on the sign)
    plain = {"u": "v", "i": "v ^ SB",
             "f": "v ^ (((np.uint64(0) - (v >> np.uint64(BITS - 1))) & ALL) | SB)"}[kind]
    inverse = {"u": "k", "i": "k ^ SB",
               "f": "k ^ (((np.uint64(0) - ((k >> np.uint64(BITS - 1)) ^ np.uint64(1))) & ALL)"
                    " | SB)"}[kind]
    return ("@njit(inline='always', error_model='numpy')\ndef nkey(x):\n"
            f"    v = np.uint64(x)\n    return {plain}\n\n\n"
            "@njit(inline='always', error_model='numpy')\ndef nunkey(k):\n"
            f"    return {inverse}\n\n\n")


def _transpose_in(g_count):
    # one loop over the elements, G row streams in, one interleaved store stream (vectorizes
    # while the runtime alias checks stay within LLVM's limit of 8)
    s = ("@njit(inline='always', error_model='numpy')\n"
         "def trans_in_full(src, T, base0, n, dm):\n"
         "    base = np.uint64(base0)\n    nn = np.uint64(n)\n")
    s += "".join(f"    s{g} = src[base + np.uint64({g}) * nn:base + np.uint64({g + 1}) * nn]\n"
                 for g in range(g_count))
    s += "    for i0 in range(n):\n        i = np.uint64(i0)\n"
    s += "".join(f"        T[i * np.uint64(NG) + np.uint64({g})] = KT(nkey(s{g}[i]) ^ dm)\n"
                 for g in range(g_count))
    return s + "\n\n"


_NETWORK = '''
NG = NGVAL   # lanes: rows sorted together
NW = NWVAL   # rows of a block in registers


@njit(inline='always', error_model='numpy')
def layer_up(T, lo0, m0):
    # rows [lo, lo + m) against [lo + m, lo + 2m): min low (m counts keys: rows * NG)
    lo = np.uint64(lo0)
    m = np.uint64(m0)
    for q0 in range(m0):
        q = np.uint64(q0) + lo
        a = T[q]
        b = T[q + m]
        T[q] = min(a, b)
        T[q + m] = max(a, b)


@njit(inline='always', error_model='numpy')
def layer_dn(T, lo0, m0):
    lo = np.uint64(lo0)
    m = np.uint64(m0)
    for q0 in range(m0):
        q = np.uint64(q0) + lo
        a = T[q]
        b = T[q + m]
        T[q] = max(a, b)
        T[q + m] = min(a, b)


KNEG = (~(SB | EXPM)) & ALL   # plain key of -inf: below it, negative nans
KPOS = SB | EXPM              # of +inf: above it, positive nans
KNZ = ABSM                    # of -0.0


@njit(inline='always', error_model='numpy')
def net_keys_in(src, T, r0, nr, n, N, dm, canon):
    # rows r0 .. r0 + nr of src -> lanes of T (keys ^ dm: plain keys, or canonical ones, where
    # nan and -0.0 lose their bits), rows n .. N all ones
    if nr == NG and TRANS_FULL and not canon:
        trans_in_full(src, T, r0 * n, n, dm)
    else:
        for g in range(nr):
            row = src[(r0 + g) * n:(r0 + g + 1) * n]
            for i0 in range(n):
                i = np.uint64(i0)
                k = tokey(row[i]) if canon else nkey(row[i])
                T[i * np.uint64(NG) + np.uint64(g)] = KT(k ^ dm)
    pad = KT(ALL)
    for q in range(n * NG, N * NG):
        T[q] = pad


@njit(inline='always', error_model='numpy')
def lane_special(T, g, n, dm):
    # sorted lane g of plain keys: does its row hold nan or -0.0?
    lo = np.uint64(T[np.uint64(g)]) ^ dm
    hi = np.uint64(T[np.uint64(n - 1) * np.uint64(NG) + np.uint64(g)]) ^ dm
    if max(lo, hi) > KPOS or min(lo, hi) < KNEG:
        return True
    # lower bound of -0.0's key, branch-free (a mispredicted branch per step costs more)
    t = KNZ ^ dm
    a = np.uint64(0)
    m = n
    while m > 1:
        h = m >> 1
        k = np.uint64(T[(a + np.uint64(h)) * np.uint64(NG) + np.uint64(g)])
        a += np.uint64(h) if k < t else np.uint64(0)
        m -= h
    # the lower bound is a or a + 1
    if np.uint64(T[a * np.uint64(NG) + np.uint64(g)]) == t:
        return True
    return a + np.uint64(1) < np.uint64(n) and \
        np.uint64(T[(a + np.uint64(1)) * np.uint64(NG) + np.uint64(g)]) == t


@njit(nogil=True, error_model='numpy')
def net_sort(T, N):
    # T: N rows of NG lanes (N = NW * 2**k) -> every lane sorted ascending
    nb = N // NW
    for b in range(0, nb, 2):
        sort_up(T, b * NW * NG)
    for b in range(1, nb, 2):
        sort_dn(T, b * NW * NG)
    s = 2 * NW
    while s <= N:
        for b0 in range(0, N, s):
            # block [b0, b0 + s) is bitonic; sort it up if its index is even (the last: up)
            asc = (b0 // s) % 2 == 0
            j = s // 2
            while j >= NW:
                for c0 in range(b0, b0 + s, 2 * j):
                    if asc:
                        layer_up(T, c0 * NG, j * NG)
                    else:
                        layer_dn(T, c0 * NG, j * NG)
                j //= 2
            if asc:
                for b in range(b0 // NW, (b0 + s) // NW):
                    merge_up(T, b * NW * NG)
            else:
                for b in range(b0 // NW, (b0 + s) // NW):
                    merge_dn(T, b * NW * NG)
        s *= 2


@njit(cache=True, nogil=True, error_model='numpy')
def net_groups(src, out, T, g0, g1, rows, n, N, desc):
    # rows [g0 * NG, min(g1 * NG, rows)) of src sorted into out, NG rows at a time; T: N * NG
    # keys of scratch. Also the serial entry point (a wrapper would cost its own compile).
    dm = ALL if desc else np.uint64(0)
    for grp in range(g0, g1):
        r0 = grp * NG
        nr = min(NG, rows - r0)
        net_keys_in(src, T, r0, nr, n, N, dm, False)
        net_sort(T, N)
        flags = np.uint64(0)
        if FLOAT:
            for g in range(nr):
                if lane_special(T, g, n, dm):
                    flags |= np.uint64(1) << np.uint64(g)
            if flags:
                net_keys_in(src, T, r0, nr, n, N, dm, True)
                net_sort(T, N)
        for g in range(nr):
            row = out[(r0 + g) * n:(r0 + g + 1) * n]
            for i0 in range(n):
                i = np.uint64(i0)
                row[i] = KT(nunkey(np.uint64(T[i * np.uint64(NG) + np.uint64(g)]) ^ dm))
            if (flags >> np.uint64(g)) & np.uint64(1):
                fix_special(src[(r0 + g) * n:(r0 + g + 1) * n], row, desc)


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def vnet_parallel(src, out, rows, n, N, desc, nch):
    ng = (rows + NG - 1) // NG
    for c in prange(nch):
        T = np.empty(N * NG, KT)
        net_groups(src, out, T, ng * c // nch, ng * (c + 1) // nch, rows, n, N, desc)
'''


def network_source(width, kind):
    """The network kernels for keys of `width` bytes and `kind` ('u' | 'i' | 'f'): serial
    net_groups(src, out, T, g0, g1, rows, n, N, desc) sorts row groups [g0, g1) of the rows of
    n elements (N: n padded to W times a power of two, T: N * lanes keys of scratch), and
    vnet_parallel(src, out, rows, n, N, desc, nch) all of them in nch chunks over threads."""
    g_count = lanes(width)
    full = g_count <= 8  # more row streams than alias checks LLVM allows: the generic loop
    src = _NETWORK.replace("NGVAL", str(g_count)).replace("NWVAL", str(W)) \
        .replace("TRANS_FULL", str(full))
    src += "\n\n" + _key_fns(kind) + _block("sort_up", _oddeven_merge_sort(W), False)
    src += _block("sort_dn", _oddeven_merge_sort(W), True)
    src += _block("merge_up", _half_cleaners(W), False)
    src += _block("merge_dn", _half_cleaners(W), True)
    if full:
        src += _transpose_in(g_count)
    else:
        src += ("@njit(inline='always', error_model='numpy')\n"
                "def trans_in_full(src, T, base0, n, dm):\n    return np.uint64(0)\n\n\n")
    return src
