"""The priority of an index's background work (a graph build, the postings read ahead), so that
the searches of its own process never wait for a core behind it.

Linux sets a nice value per thread: the calling thread drops to `BACKGROUND_NICE`, and the
kernel's autogroups keep the process's share against other processes what it was. Elsewhere
the nice value is the whole process's, so nothing changes there. Measured at 100k memories on a
busy 2-core machine (load 7-11): an exact scan of 50k vectors took 7.8 ms beside a graph
builder at the same priority and 2.2 ms (as with no build) beside one at nice 19; searches
while the postings were read ahead took 14.7-17.3 ms p50 (CPU 9.8, the reader's included)
beside a reader at the same priority and 5.6-6.6 ms (CPU 4.7-4.8, as once it is done) beside
one at nice 19, whose read then took 22-32 s instead of 10 s under continuous searching.
"""

from __future__ import annotations

import os
import sys
import threading

BACKGROUND_NICE = 19
"""The nice value of the threads that build graphs and read postings ahead (Linux)."""


def yield_to_searches() -> None:
    """Lower the calling thread's priority to `BACKGROUND_NICE` (Linux only); call it first
    thing in a thread that runs background work and nothing else."""
    if sys.platform == "linux":
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
