"""Statistics of the CUDA caching allocator (``allocator.py``) in PyTorch's ``memory_stats()``
names (``allocated_bytes.all.current`` ...), and the consistency check that recomputes them
from the block structure.

Each pool (1 = small, 2 = large) keeps one flat list of ints indexed by the constants below;
"all" figures are sums of the two pools, except peaks, which a second list tracks. Cumulative
"freed" figures are derived (total increases - current), so a free only lowers current values.
Active = allocated + pending (freed, waiting for record_stream events); its own peaks are
tracked only while something is pending (otherwise active == allocated).

The allocator updates these lists in place inside its locked code (its hot paths inline the
updates; ``tests/runtime/cuda/test_cuda_allocator_model.py`` checks every figure against a
reference model);
:class:`AllocatorStats` holds them and turns them into the ``memory_stats()`` dict.
"""
from __future__ import annotations

from .alloc_blocks import _ALLOCATED, _FREE, _KEY_SHIFT
from .alloc_config import _NO_LIMIT

__all__ = ["AllocatorStats", "check_invariants"]

(_N, _NB, _NR, _TN, _TNB, _TNR, _PN, _PNB, _PNR,          # allocations / bytes / requested
 _S, _SB, _TS, _TSB, _PS, _PSB,                           # segments / reserved bytes
 _Q, _QB, _PA, _PAB,                                      # pending, active peaks
 _I, _IB, _TI, _TIB, _PI, _PIB,                           # inactive split blocks / bytes
 _OA, _TOA, _POA, _OS, _TOS, _POS) = range(31)            # oversize allocations / segments
_NSTATS = 31

# (current, peak) pairs whose peaks reset_peaks() restarts from the current value
_PEAKS = ((_N, _PN), (_NB, _PNB), (_NR, _PNR), (_S, _PS), (_SB, _PSB), (_I, _PI), (_IB, _PIB),
          (_OA, _POA), (_OS, _POS))


class AllocatorStats:
    """The figures of one device allocator: ``pools`` (None, small, large) of per-pool lists,
    ``peaks`` (the "all" peaks), ``rows[pool]`` = (this pool's list, the other pool's, the "all"
    peaks) for the inlined updates, the counters, and the baselines of cumulative figures after
    :meth:`reset_accumulated`. Callers hold the allocator's lock."""

    __slots__ = ("pools", "peaks", "rows", "base", "max_split", "num_alloc_retries", "num_ooms",
                 "num_sync_all_streams", "num_device_alloc", "num_device_free")

    def __init__(self, max_split: int):
        small, large = [0] * _NSTATS, [0] * _NSTATS
        self.pools = (None, small, large)
        self.peaks = [0] * _NSTATS
        self.rows = (None, (small, large, self.peaks), (large, small, self.peaks))
        self.base = {}
        self.max_split = max_split
        self._zero_counters()

    def _zero_counters(self) -> None:
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_sync_all_streams = 0
        self.num_device_alloc = 0
        self.num_device_free = 0

    def bump(self, P, cur, tot, peak, n) -> None:
        """Add ``n`` to a pool statistic, keeping its total and both peaks."""
        c = P[cur] + n
        P[cur] = c
        if n > 0:
            P[tot] += n
            if c > P[peak]:
                P[peak] = c
            c += self.pools[2 if P is self.pools[1] else 1][cur]
            if c > self.peaks[peak]:
                self.peaks[peak] = c

    def active_peaks(self) -> None:
        """Active = allocated + pending; its peaks need tracking only while blocks pend."""
        A = self.peaks
        na = nb = 0
        for P in self.pools[1:]:
            n = P[_N] + P[_Q]
            b = P[_NB] + P[_QB]
            if n > P[_PA]:
                P[_PA] = n
            if b > P[_PAB]:
                P[_PAB] = b
            na += n
            nb += b
        if na > A[_PA]:
            A[_PA] = na
        if nb > A[_PAB]:
            A[_PAB] = nb

    def allocated_bytes(self) -> int:
        return self.pools[1][_NB] + self.pools[2][_NB]

    def reserved_bytes(self) -> int:
        return self.pools[1][_SB] + self.pools[2][_SB]

    def raw(self) -> dict:
        """All statistics, cumulative ones not yet adjusted for a reset."""
        out = {}
        pools = self.pools[1:]
        A = self.peaks

        def put(name, curs, tots, peaks, all_peak):
            rows = (("all", sum(curs), max(all_peak, sum(curs)), sum(tots)),
                    ("small_pool", curs[0], peaks[0], tots[0]),
                    ("large_pool", curs[1], peaks[1], tots[1]))
            for pname, c, pk, t in rows:
                prefix = f"{name}.{pname}."
                out[prefix + "current"] = c
                out[prefix + "peak"] = pk
                out[prefix + "allocated"] = t
                out[prefix + "freed"] = t - c

        def simple(name, cur_i, tot_i, peak_i):
            put(name, [P[cur_i] for P in pools], [P[tot_i] for P in pools],
                [P[peak_i] for P in pools], A[peak_i])

        simple("allocation", _N, _TN, _PN)
        simple("allocated_bytes", _NB, _TNB, _PNB)
        simple("requested_bytes", _NR, _TNR, _PNR)
        # Active = allocated + pending; its peak is at least the allocated peak.
        put("active", [P[_N] + P[_Q] for P in pools], [P[_TN] for P in pools],
            [max(P[_PA], P[_PN]) for P in pools], max(A[_PA], A[_PN]))
        put("active_bytes", [P[_NB] + P[_QB] for P in pools], [P[_TNB] for P in pools],
            [max(P[_PAB], P[_PNB]) for P in pools], max(A[_PAB], A[_PNB]))
        simple("segment", _S, _TS, _PS)
        simple("reserved_bytes", _SB, _TSB, _PSB)
        simple("inactive_split", _I, _TI, _PI)
        simple("inactive_split_bytes", _IB, _TIB, _PIB)
        for name, cur_i, tot_i, peak_i in (("oversize_allocations", _OA, _TOA, _POA),
                                           ("oversize_segments", _OS, _TOS, _POS)):
            c = sum(P[cur_i] for P in pools)
            t = sum(P[tot_i] for P in pools)
            out[name + ".current"] = c
            out[name + ".peak"] = max(A[peak_i], c)
            out[name + ".allocated"] = t
            out[name + ".freed"] = t - c
        out["num_alloc_retries"] = self.num_alloc_retries
        out["num_ooms"] = self.num_ooms
        out["num_sync_all_streams"] = self.num_sync_all_streams
        out["num_device_alloc"] = self.num_device_alloc
        out["num_device_free"] = self.num_device_free
        out["max_split_size"] = -1 if self.max_split >= _NO_LIMIT else self.max_split
        return out

    def as_dict(self) -> dict:
        """memory_stats(): :meth:`raw` less the baselines, sorted by key."""
        out = self.raw()
        for k, v in self.base.items():
            out[k] -= v
        return dict(sorted(out.items()))

    def reset_peaks(self) -> None:
        """Every peak restarts from its current value."""
        for P in self.pools[1:]:
            for cur, peak in _PEAKS:
                P[peak] = P[cur]
            P[_PA] = P[_N] + P[_Q]
            P[_PAB] = P[_NB] + P[_QB]
        A = self.peaks
        P1, P2 = self.pools[1], self.pools[2]
        for cur, peak in _PEAKS:
            A[peak] = P1[cur] + P2[cur]
        A[_PA] = P1[_N] + P1[_Q] + P2[_N] + P2[_Q]
        A[_PAB] = P1[_NB] + P1[_QB] + P2[_NB] + P2[_QB]

    def reset_accumulated(self) -> None:
        """Zero the cumulative figures (``*.allocated``, ``*.freed``, the num_* counters)."""
        self.base = {k: v for k, v in self.raw().items()
                     if k.endswith(".allocated") or k.endswith(".freed")}
        self._zero_counters()


def check_invariants(segments, pools, allocated, stats: AllocatorStats) -> None:
    """Assert that the block structure is consistent and that the current figures match it:
    free lists sorted with fresh keys, blocks tiling each segment, no two adjacent free blocks,
    every free block in its free list, every allocated block in ``allocated``; reserved,
    allocated and inactive-split figures recomputed from the segments. ``segments`` are the
    allocator's Segment objects, ``pools`` its (None, small, large) dicts of stream id ->
    _FreeList; its lock is held by the caller."""
    seg_bytes = {1: 0, 2: 0}
    alloc_bytes = {1: 0, 2: 0}
    split_free = {1: [0, 0], 2: [0, 0]}
    free_ptrs = set()
    for pool in (1, 2):
        for sid, fl in pools[pool].items():
            assert fl.keys == sorted(fl.keys), "free list out of order"
            assert len(fl.keys) == len(fl.blocks)
            for k, b in zip(fl.keys, fl.blocks):
                assert k == (b.size << _KEY_SHIFT | b.ptr), "stale free-list key"
                assert b.state == _FREE and b.stream == sid
                assert b.small == (pool == 1)
                free_ptrs.add(b.ptr)
    for seg in segments:
        pool = 1 if seg.small else 2
        seg_bytes[pool] += seg.size
        b = seg.head
        assert b.prev is None and b.ptr == seg.ptr, "segment head is wrong"
        end = seg.ptr
        prev_free = False
        while b is not None:
            assert b.ptr == end, "gap or overlap between blocks"
            assert b.segment is seg
            end += b.size
            if b.state == _FREE:
                assert not prev_free, "two adjacent free blocks were not merged"
                assert b.ptr in free_ptrs, "free block missing from its free list"
                if b.prev is not None or b.next is not None:
                    split_free[pool][0] += 1
                    split_free[pool][1] += b.size
            elif b.state == _ALLOCATED:
                alloc_bytes[pool] += b.size
                assert allocated.get(b.ptr) is b
            prev_free = b.state == _FREE
            if b.next is not None:
                assert b.next.prev is b
            b = b.next
        assert end == seg.ptr + seg.size, "blocks do not cover the segment"
    for pool in (1, 2):
        P = stats.pools[pool]
        assert P[_SB] == seg_bytes[pool], (P[_SB], seg_bytes[pool])
        assert P[_NB] == alloc_bytes[pool], (P[_NB], alloc_bytes[pool])
        assert [P[_I], P[_IB]] == split_free[pool], ([P[_I], P[_IB]], split_free[pool])
