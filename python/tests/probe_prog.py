"""A Python program instrumented with the module kron (python_test.sh records it under kron record):
a thread name, two phases, named scopes by `with` and by decorator (nested), a named event, a latency histogram
and a virtual counter, in the main thread and in one more thread.

    python3 probe_prog.py N      N steps a phase in each thread
"""
import sys
import threading

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
print("attached", kron.attached())
