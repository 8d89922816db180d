"""A Python program instrumented with the module kron (python_test.sh records it under kron record):
a thread name, two phases, named scopes by `with` and by decorator (nested), a named event, a latency histogram
and a virtual counter, in the main thread and in one more thread; then, in the main thread, signed values
(DECISION D30): events "signed" carrying -5, 0, 2**47-1 and -2**47, events "signed outside" carrying 2**47,
-2**47-1 and 2**64-5 (their low 48 bits: D31), events "signed numpy" carrying numpy's int64 -5 and uint64 2**64-5,
a scope "signed scope" carrying -5.

    python3 probe_prog.py N      N steps a phase in each thread
"""
import sys
import threading

import numpy as np

import kron

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
h = kron.histogram("py step")


@kron.scoped
def step(i):
    with kron.latency(h):
        kron.vcount(3, 1)
        return i * 2


def work(name):
    kron.thread_name(name)
    for p in (1, 2):
        kron.phase(p)
        with kron.scope("py phase", p):
            for i in range(n):
                step(i)
            kron.event("py done", p)
    assert kron.current_phase() == 2


t = threading.Thread(target=work, args=("py worker",))
t.start()
work("py main")
t.join()
for v in (-5, 0, 2**47 - 1, -2**47):
    kron.event("signed", v)
for v in (2**47, -2**47 - 1, 2**64 - 5):
    kron.event("signed outside", v)
for v in (np.int64(-5), np.uint64(2**64 - 5)):
    kron.event("signed numpy", v)
with kron.scope("signed scope", -5):
    pass
print("attached", kron.attached())
