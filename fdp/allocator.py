"""Opt-in tuning of the C allocator for processes that run many fdp queries.

An fdp query allocates and frees a few hundred grid-sized numpy temporaries (0.5 MB each on
MNIST's grid of 2¹⁶ points, 8 MB on a long run's 2¹⁹). With glibc's default settings much of
that memory goes back to the operating system between uses (trimmed from the heap top, or
unmapped), and the next allocation takes its pages again, each one a page fault. Measured on
this project's 2-core machine (medians of a composition and its certified bracket, a fresh
curve per query as in a calibration loop or a sweep):

- DP-SGD MNIST (σ = 1.1, p = 256/60000, T = 14063): 38–45 ms by default, 27 ms tuned;
- DP-SGD σ = 0.8, p = 0.01, T = 10⁴: 39–43 ms, 25 ms;
- DP-SGD σ = 2, p = 1e-3, T = 10⁶: 340 ms, 200 ms;
- Laplace(0.1)^1000: 5.7 ms either way (its grids are small).

:func:`tune_allocator` raises glibc's trim and mmap thresholds (``mallopt``), so that freed
blocks under the mmap threshold stay in the heap for the next allocation. The peak memory of
a query does not change (the deep queries of ``dpsgd(0.8, 1e-5, 10**6)`` peak at 0.88 GB
either way); the process may keep up to the trim threshold of freed memory, and blocks below
the mmap threshold come from the heap, where fragmentation can keep more. This is a setting
of the whole process, which a library should not make behind its user's back: fdp never calls
it on import. The ``fdp`` command calls it (it is its own process), and so may a script or a
sweep's worker: call it once, first thing. glibc only (Linux); elsewhere it does nothing and
returns False.
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["tune_allocator"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

#: the default thresholds of :func:`tune_allocator` (bytes)
TRIM_THRESHOLD = 64 << 20
MMAP_THRESHOLD = 64 << 20


def tune_allocator(trim: int = TRIM_THRESHOLD, mmap: int = MMAP_THRESHOLD) -> bool:
    """Set glibc's ``M_TRIM_THRESHOLD`` and ``M_MMAP_THRESHOLD`` for this process (see the
    module docstring for what it buys and costs). Returns whether both were set.

    Parameters
    ----------
    trim : int, default 64 MiB
        Free memory at the top of the heap kept before it is returned to the system.
    mmap : int, default 64 MiB
        Blocks at least this large are mapped on their own (and unmapped when freed); smaller
        ones come from the heap. (Setting it also ends glibc's own adjustment of this
        threshold, which starts at 128 KiB.)

    Examples
    --------
    >>> import fdp
    >>> fdp.tune_allocator() in (True, False)  # False where the C library is not glibc
    True
    """
    for name, value in (("trim", trim), ("mmap", mmap)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int (bytes), got {type(value).__name__}")
        if not 0 < value < 2**31:
            raise ValueError(f"{name}={value} must be in (0, 2**31) bytes")
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # (not glibc: macOS, Windows, musl without mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_TRIM_THRESHOLD, trim)) and bool(mallopt(_M_MMAP_THRESHOLD, mmap))
