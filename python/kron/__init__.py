"""kron for Python: probes into a live board, and trace files read as numpy arrays (docs/languages.md).

Probing (a no-op unless the process runs under `kron record` / `kron run`, which set $KRON_BOARD):

    import kron
    kron.thread_name("main")
    kron.phase(1)
    with kron.scope("load"):          # a named scope; kron.scope("x", value) carries a value (signed 48 bits)
        ...
    @kron.scoped                      # or @kron.scope("name"): every call is a scope
    def step(): ...
    kron.event("bytes out", n)        # a named event
    # A value is a signed 48-bit integer (-2**47 .. 2**47-1), read back as given (-5 as -5); any other int
    # keeps its low 48 bits, as in C (docs/decisions.md, DECISION D30, D31).
    h = kron.histogram("get")
    with kron.latency(h): ...         # the block's duration into histogram h; kron.record_latency(h, ticks)
    kron.vcount(4711, 1)              # virtual counter 0-8191

Reading:

    t = kron.open("run.trace")
    s = t.samples()        # numpy structured array, one row a sample (SAMPLE_FIELDS); zero-copy when uncompressed
    iv = t.intervals()     # the matched scopes: name, source, thread, begin, end, duration, on_cpu, value
    t.histograms(), t.counters()
    for batch in t.batches(1 << 20): ...   # a file larger than memory, a batch at a time
"""
import functools as _functools
import sys as _sys

import numpy as _np

from . import _kron
from ._kron import (attached, trace, resource, count, thread_name, phase, current_phase, vcount, now,
                    InputError)

__all__ = ["attached", "trace", "resource", "count", "thread_name", "phase", "current_phase", "vcount", "now",
           "scope", "scoped", "event", "histogram", "record_latency", "latency", "open", "Trace", "InputError",
           "thread_of", "cpu_of", "name_id_of", "named_value_of", "SAMPLE_FIELDS"]

_SITE_SCOPE, _SITE_EVENT = 1, 2      # kron/site.h
_EVENT, _BEGIN, _END = 0, 1, 2       # mk.h KRON_NAMED_*
_sites = {}


def _site(name, kind, where):
    """The probe site of `name` at `where` (file, function, line), registered once, as a C++ site is."""
    key = (name, kind) + where
    s = _sites.get(key)
    if s is None:
        s = _sites[key] = _kron.site(name, kind, *where)
    return s


def _caller(depth):
    f = _sys._getframe(depth)
    return (f.f_code.co_filename, f.f_code.co_name, f.f_lineno)


class scope:
    """A named scope: `with kron.scope("name"):` or, as a decorator, `@kron.scope("name")`."""
    __slots__ = ("_site", "_value")

    def __init__(self, name, value=0, _where=None):
        self._site = _site(name, _SITE_SCOPE, _where or _caller(2))
        self._value = value

    def __enter__(self):
        _kron.named(self._site, self._value, _BEGIN)
        return self

    def __exit__(self, *exc):
        _kron.named(self._site, self._value, _END)
        return False

    def __call__(self, fn):
        site, value = self._site, self._value

        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            _kron.named(site, value, _BEGIN)
            try:
                return fn(*args, **kwargs)
            finally:
                _kron.named(site, value, _END)
        return wrapper


def scoped(fn=None, *, name=None):
    """Decorator: every call of the function is a named scope (its qualified name unless `name` is given)."""
    def wrap(f):
        code = f.__code__
        return scope(name or f.__qualname__, _where=(code.co_filename, f.__qualname__, code.co_firstlineno))(f)
    return wrap(fn) if fn is not None else wrap


def event(name, value=0):
    """A named event carrying `value` (an int: signed 48 bits, -2**47 .. 2**47-1, DECISION D30)."""
    _kron.named(_site(name, _SITE_EVENT, _caller(2)), value, _EVENT)


def histogram(name):
    """A latency histogram by name (at most 39 bytes kept), registered on first use."""
    return _kron.histogram(name)


def record_latency(h, ticks):
    """One value (timestamp ticks, or any unit) into this thread's shard of histogram `h` in its phase."""
    _kron.record_latency(h, ticks)


class latency:
    """`with kron.latency(h):` the block's duration in timestamp ticks into histogram `h`."""
    __slots__ = ("_h", "_t0")

    def __init__(self, h):
        self._h = h if isinstance(h, int) else _kron.histogram(h)

    def __enter__(self):
        self._t0 = _kron.now()
        return self

    def __exit__(self, *exc):
        _kron.record_latency(self._h, _kron.now() - self._t0)
        return False


# ---- reading ---------------------------------------------------------------------------------------------------
SAMPLE_FIELDS = ("kind", "size", "flags", "group", "phase", "source", "thread_cpu", "timestamp", "data")
KIND_TRACE, KIND_RESOURCE = 1, 2
FLAG_NAMED, FLAG_SCOPE_END, FLAG_SCOPE_BEGIN = 1 << 4, 1 << 5, 1 << 6


def thread_of(samples):
    """The thread ids of samples (thread_cpu bits 0-21)."""
    return samples["thread_cpu"] & 0x3FFFFF


def cpu_of(samples):
    """The cpus of samples (thread_cpu bits 22-31; 1023: 1023 or above)."""
    return samples["thread_cpu"] >> 22


def name_id_of(samples):
    """The site ids of named samples (data bits 48-63; meaningful where flags has FLAG_NAMED)."""
    return (samples["data"] >> 48).astype(_np.uint16)


def named_value_of(samples):
    """The values named probes carried, as int64 (data bits 0-47, a signed 48-bit integer: DECISION D30; decoded
    by kron's one decoder, record::named_value_of)."""
    return _kron.named_value_of(samples["data"])


class Trace:
    """A kron trace file. Errors in the file raise kron.InputError naming the file and offset."""

    def __init__(self, path):
        self._t = _kron.TraceFile(str(path))
        self.path = str(path)

    @property
    def header(self):
        """The file header's fields (clock_hz, samples, program, complete, compressed, ...)."""
        return self._t.header

    @property
    def zero_copy(self):
        """True when samples() and batches() are views of the mapped file (uncompressed, all Trace samples)."""
        return self._t.zero_copy

    @property
    def clock_hz(self):
        return self._t.header["clock_hz"]

    def samples(self):
        """Every sample as a numpy structured array (fields SAMPLE_FIELDS; see thread_of, cpu_of, name_id_of).
        A read-only view of the mapped file when zero_copy, else a copy (compressed files, Resource samples)."""
        return self._t.samples()

    def batches(self, n=1 << 20):
        """The samples, at most n at a time: memory stays bounded whatever the file's size."""
        if self._t.zero_copy:
            total = self._t.header["samples"]
            for first in range(0, total, n):
                self._t.release(first)  # the pages of the batches before: given back (read again if used)
                yield self._t.view(first, min(n, total - first))
            return
        self._t.rewind()
        while True:
            b = self._t.next_batch(n)
            if len(b) == 0:
                return
            yield b

    def intervals(self, info=None):
        """The matched intervals: named scopes (and interval.info's classes when `info` names one), as a dict of
        numpy columns: name (list of str), source, thread, begin, end, duration (ticks), on_cpu (ticks from
        kron record --sched, -1 without), value (int64, DECISION D30), name_id. With pandas installed,
        intervals_frame() gives a DataFrame."""
        return self._t.intervals(str(info) if info else "")

    def histograms(self):
        """name -> phase -> {count, sum, min, max, buckets, bucket_lo, bucket_hi}, merged as kron hist merges."""
        return self._t.histograms()

    def counters(self):
        """phase -> {virtual counter index: value}, summed across threads."""
        return self._t.counters()

    def sites(self):
        """Named probes' sites: id -> (name, "file:line function")."""
        return self._t.sites()

    def thread_name(self, source, thread):
        return self._t.thread_name(source, thread)

    def warnings(self):
        return self._t.warnings()

    def samples_frame(self):
        """samples() as a pandas DataFrame with decoded columns (needs pandas)."""
        import pandas as pd
        s = self.samples()
        return pd.DataFrame({"timestamp": s["timestamp"], "source": s["source"], "thread": thread_of(s),
                             "cpu": cpu_of(s), "phase": s["phase"], "group": s["group"], "flags": s["flags"],
                             "kind": s["kind"], "data": s["data"]})

    def intervals_frame(self, info=None):
        """intervals() as a pandas DataFrame (needs pandas)."""
        import pandas as pd
        return pd.DataFrame(self.intervals(info))


def open(path):  # noqa: A001 (the module's reading entry point, as kron.open)
    """Opens a kron trace file (kron.Trace)."""
    return Trace(path)
