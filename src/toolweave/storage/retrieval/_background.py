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

A lower priority does not keep background work off the other core, where it still slows a
search through the shared cache and memory bandwidth (at 100k: 4.5 ms of CPU per search at
rest, 7.0 beside a builder held before its first chunk, 8.8-11.2 beside a running one). So a
graph builder also waits, before each small chunk, until no search of its index is in flight
(`SearchGate`), at most `DEFER_MAX` seconds per chunk so that searches back to back
cannot keep the graph from ever being built. The postings reader waits the same way before each
step of its read (a batch of rows, or a slice of SQLite's own work): right after a 100k store
opened, searches beside it at nice 19 took 11.2 ms p50 (p95 80-100 ms) on an idle 2-core machine,
where it had the other core to itself.
"""

from __future__ import annotations

import os
import sys
import threading

BACKGROUND_NICE = 19
"""The nice value of the threads that build graphs and read postings ahead (Linux)."""
DEFER_MAX = 0.05
"""The longest (seconds) background work waits for the searches in flight before one step."""


def yield_to_searches() -> None:
    """Lower the calling thread's priority to `BACKGROUND_NICE` (Linux only); call it first
    thing in a thread that runs background work and nothing else."""
    if sys.platform == "linux":
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


class SearchGate:
    """The searches in flight over one index (`with gate:` around each), which background work
    lets finish before each of its steps (`wait_idle`)."""

    def __init__(self) -> None:
        #: Notified when the last search in flight ends and when background work starts to wait.
        self.changed = threading.Condition()
        self.searching = 0
        #: How many times background work has waited for searches (not counting `stop`).
        self.deferrals = 0

    def __enter__(self) -> None:
        with self.changed:
            self.searching += 1

    def __exit__(self, *exc: object) -> None:
        with self.changed:
            self.searching -= 1
            if not self.searching:
                self.changed.notify_all()

    def wait_idle(self, stop: threading.Event) -> None:
        """Return once no search is in flight, `stop` is set (`wake` tells), or `DEFER_MAX`
        seconds have passed."""
        with self.changed:
            if not self.searching or stop.is_set():
                return
            self.deferrals += 1
            self.changed.notify_all()
            self.changed.wait_for(lambda: not self.searching or stop.is_set(), DEFER_MAX)

    def wake(self) -> None:
        """Wake background work waiting in `wait_idle` (after setting its stop event)."""
        with self.changed:
            self.changed.notify_all()
