"""The CUDA caching allocator against a plain reference model of its rules.

``CUDACachingAllocator.malloc`` hand-inlines rounding, best fit, the split of the remainder and
every statistics update (its hot path); ``free`` goes through the generic ``_free_block`` merge.
Here random malloc / free / empty_cache sequences run through both the allocator and a model
that keeps segments as plain lists of blocks and recomputes every figure from that structure:
the model predicts each returned pointer and size, each segment's block layout, and the whole
set of statistics (current from the structure, peaks as the maximum over time, cumulative
totals as the sum of increases, freed = total - current). Run with the hot path alone and with
history recording on (which sends malloc through its ``extra`` branches), and with the
rounding / max_split_size options that change the rules.
"""
import random

import pytest
from hypothesis import given, settings, strategies as st

from tensorlib.runtime.cuda.alloc_config import (LARGE_BUFFER, MIN_BLOCK_SIZE, SMALL_SIZE,
                                                 AllocatorConfig, allocation_size, round_size)
from tensorlib.runtime.cuda.allocator import CUDACachingAllocator
from tensorlib.runtime.cuda.interpret import InterpretDriver

MiB = 1 << 20
POOLS = ("small_pool", "large_pool")
FIGURES = ("allocation", "allocated_bytes", "requested_bytes", "active", "active_bytes",
           "segment", "reserved_bytes", "inactive_split", "inactive_split_bytes",
           "oversize_allocations", "oversize_segments")


class Model:
    """Segments as address-ordered lists of [ptr, size, requested or None (free)]."""

    def __init__(self, cfg):
        self.divisions = cfg.roundup_power2_divisions
        self.max_split = cfg.max_split_size
        self.segments = {}  # ptr -> {"pool", "stream", "size", "blocks"}
        self.peaks = {}     # (figure, pool name) -> peak
        self.totals = {}    # (figure, pool name) -> sum of increases
        self.device_alloc = self.device_free = 0
        self.last = self.current()

    def current(self):
        cur = {(f, p): 0 for f in FIGURES for p in POOLS}
        for seg in self.segments.values():
            p = POOLS[seg["pool"] - 1]
            cur["segment", p] += 1
            cur["reserved_bytes", p] += seg["size"]
            cur["oversize_segments", p] += seg["size"] >= self.max_split
            split = len(seg["blocks"]) > 1
            for _, size, req in seg["blocks"]:
                if req is None:
                    cur["inactive_split", p] += split
                    cur["inactive_split_bytes", p] += size if split else 0
                else:
                    for f, v in (("allocation", 1), ("allocated_bytes", size),
                                 ("requested_bytes", req), ("active", 1),
                                 ("active_bytes", size),
                                 ("oversize_allocations", size >= self.max_split)):
                        cur[f, p] += v
        for f in FIGURES:
            cur[f, "all"] = cur[f, POOLS[0]] + cur[f, POOLS[1]]
        return cur

    def step(self):
        """Account one operation's changes (the allocator updates each figure once per op)."""
        cur = self.current()
        for key, v in cur.items():
            self.peaks[key] = max(self.peaks.get(key, 0), v)
            self.totals[key] = self.totals.get(key, 0) + max(0, v - self.last[key])
        self.last = cur

    def stats(self):
        out = {}
        for (f, p), c in self.last.items():
            if f.startswith("oversize") and p != "all":
                continue  # the allocator reports oversize figures for "all" only
            name = f if f.startswith("oversize") else f"{f}.{p}"
            out[f"{name}.current"] = c
            out[f"{name}.peak"] = self.peaks.get((f, p), 0)
            out[f"{name}.allocated"] = self.totals.get((f, p), 0)
            out[f"{name}.freed"] = self.totals.get((f, p), 0) - c
        out["num_device_alloc"] = self.device_alloc
        out["num_device_free"] = self.device_free
        return out

    def predict_malloc(self, size, sid):
        """(rsize, pool, (segment ptr, block index) of the best fit, or None for a new one)."""
        rsize = round_size(size, self.divisions)
        pool = 1 if rsize <= SMALL_SIZE else 2
        fits = [(b[1], b[0], sp, i) for sp, seg in self.segments.items()
                if seg["pool"] == pool and seg["stream"] == sid
                for i, b in enumerate(seg["blocks"]) if b[2] is None and b[1] >= rsize]
        if not fits:
            return rsize, pool, None
        bsize, _, sp, i = min(fits)
        ms = self.max_split
        if pool == 2 and ((rsize < ms <= bsize) or (rsize >= ms and bsize >= rsize + LARGE_BUFFER)):
            return rsize, pool, None  # oversize rule: the best fit is refused, a new segment
        return rsize, pool, (sp, i)

    def malloc(self, size, sid, rsize, pool, where, new_seg_ptr):
        if where is None:
            seg_size = allocation_size(rsize)
            self.segments[new_seg_ptr] = {"pool": pool, "stream": sid, "size": seg_size,
                                          "blocks": [[new_seg_ptr, seg_size, None]]}
            self.device_alloc += 1
            where = (new_seg_ptr, 0)
        sp, i = where
        blocks = self.segments[sp]["blocks"]
        ptr, bsize, _ = blocks[i]
        rest = bsize - rsize
        if (rest >= MIN_BLOCK_SIZE) if pool == 1 else (rest > SMALL_SIZE and rsize < self.max_split):
            blocks[i] = [ptr, rsize, size]
            blocks.insert(i + 1, [ptr + rsize, rest, None])
        else:
            blocks[i] = [ptr, bsize, size]
        self.step()
        return blocks[i][0], blocks[i][1]

    def free(self, ptr):
        for seg in self.segments.values():
            blocks = seg["blocks"]
            for i, b in enumerate(blocks):
                if b[0] == ptr:
                    b[2] = None
                    if i + 1 < len(blocks) and blocks[i + 1][2] is None:
                        b[1] += blocks.pop(i + 1)[1]
                    if i > 0 and blocks[i - 1][2] is None:
                        blocks[i - 1][1] += blocks.pop(i)[1]
                    self.step()
                    return
        raise AssertionError(f"model: no block at 0x{ptr:x}")

    def empty_cache(self):
        for sp in [sp for sp, seg in self.segments.items()
                   if len(seg["blocks"]) == 1 and seg["blocks"][0][2] is None]:
            del self.segments[sp]
            self.device_free += 1
        self.step()

    def layout(self):
        return [[(size, "inactive" if req is None else "active_allocated")
                 for _, size, req in self.segments[sp]["blocks"]] for sp in sorted(self.segments)]


def check(a, model):
    stats = a.memory_stats()
    expected = model.stats()
    got = {k: stats[k] for k in expected}
    assert got == expected, {k: (got[k], v) for k, v in expected.items() if got[k] != v}
    assert [[(b["size"], b["state"]) for b in seg["blocks"]] for seg in a.snapshot()] == \
        model.layout()


def run(ops, conf, history):
    d = InterpretDriver(memory=16 << 30)  # never full: the OOM path is tested elsewhere
    cfg = AllocatorConfig.parse(conf)
    a = CUDACachingAllocator(d, 0, config=cfg)
    if history:
        a.record_history(True)
    assert a._extra == bool(history or conf)  # which malloc path this run takes
    streams = [d.default_stream(0), d.stream_create(0), d.stream_create(0)]
    model = Model(cfg)
    live = []
    try:
        for op, size, si, pick in ops:
            if op == "free" and live:
                block = live.pop(pick % len(live))
                ptr = block.ptr  # free() may merge into the Block object (moving its ptr)
                a.free(block)
                model.free(ptr)
            elif op == "empty_cache":
                a.empty_cache()
                model.empty_cache()
            else:
                stream = streams[si]
                rsize, pool, where = model.predict_malloc(size, stream.id)
                segments_before = set(a._segments)
                block = a.malloc(size, stream)
                new = set(a._segments) - segments_before
                assert len(new) == (where is None), "a new segment exactly when nothing fits"
                ptr, bsize = model.malloc(size, stream.id, rsize, pool, where,
                                          new.pop() if new else None)
                assert (block.ptr, block.size, block.requested) == (ptr, bsize, size)
                live.append(block)
            check(a, model)
        a.check_invariants()
        for block in live:
            ptr = block.ptr
            a.free(block)
            model.free(ptr)
        a.empty_cache()
        model.empty_cache()
        check(a, model)
        assert a.memory_stats()["reserved_bytes.all.current"] == 0
    finally:
        d.shutdown()


CONFS = [("", False), ("", True), ("roundup_power2_divisions:4", False),
         ("max_split_size_mb:21", False)]
sizes = st.one_of(st.integers(1, 4096), st.integers(1, 2 * MiB), st.integers(MiB, 40 * MiB))
ops_st = st.lists(st.tuples(st.sampled_from(["malloc", "malloc", "free", "free", "empty_cache"]),
                            sizes, st.integers(0, 2), st.integers(0, 10 ** 6)),
                  min_size=1, max_size=60)


@pytest.mark.parametrize("conf,history", CONFS)
@settings(max_examples=30, deadline=None)
@given(ops=ops_st)
def test_allocator_matches_reference_model(conf, history, ops):
    run(ops, conf, history)


@pytest.mark.parametrize("conf,history", CONFS)
@pytest.mark.parametrize("seed", range(3))
def test_allocator_matches_reference_model_long(conf, history, seed):
    # Long mixed sequences: deep split chains, merges on both sides, reuse across streams.
    rng = random.Random(seed)
    ops = []
    for _ in range(400):
        r = rng.random()
        op = "empty_cache" if r < 0.02 else "free" if r < 0.47 else "malloc"
        size = rng.choice([rng.randint(1, 4096), rng.randint(1, 2 * MiB),
                           rng.randint(MiB, 40 * MiB)])
        ops.append((op, size, rng.randrange(3), rng.randrange(10 ** 6)))
    run(ops, conf, history)
