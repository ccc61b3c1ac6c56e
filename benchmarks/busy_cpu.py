"""Parallel kernels beside busy processes: the stall guard of runtime/cpu/cores.py on and off,
in one process, against NumPy (median / p90 / max per call).

    PYTHONPATH=src python benchmarks/busy_cpu.py [LOAD]     # LOAD busy-loop processes (default 1)

"off" disables the guard (a stall never switches to one thread), "on" is the default policy;
rounds alternate so load changes hit both.
"""
import numpy as np, time, subprocess, sys
import tensorlib as tl
from tensorlib.runtime.cpu import cores
def stats(f, reps):
    ts=[]
    for _ in range(reps):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return np.array(ts)*1e6
cases=[]
for n in (100_000, 2_000_000):
    a=np.random.rand(n).astype(np.float32); b=a.copy()
    ta, tb = tl.asarray(a), tl.asarray(b)
    cases.append((f"add {n:.0e}", lambda ta=ta,tb=tb: ta+tb, lambda a=a,b=b: a+b))
    cases.append((f"sum {n:.0e}", lambda ta=ta: tl.sum(ta), lambda a=a: a.sum()))
for _,f,g in cases: f(); f(); g()
load=int(sys.argv[1]) if len(sys.argv) > 1 else 1
procs=[subprocess.Popen([sys.executable,"-c","while True: pass"]) for _ in range(load)]
time.sleep(0.3)
res = {}
try:
    for rnd in range(3):
        for mode in ("off", "on"):
            cores.STALL_S = 1e9 if mode == "off" else 0.001
            cores._until = 0.0
            for name,f,g in cases:
                res.setdefault((name, mode), []).append(stats(f, 150))
                res.setdefault((name, "numpy"), []).append(stats(g, 150))
finally:
    for pr in procs: pr.kill()
for name,_,_ in cases:
    for mode in ("off","on","numpy"):
        ts=np.concatenate(res[(name,mode)])
        print(f"load {load} {name:9s} {mode:5s} med {np.median(ts):8.1f} p90 {np.percentile(ts,90):8.1f} max {ts.max():8.1f} us")
