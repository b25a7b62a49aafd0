"""How the simulator and the policy server tune CPython's cyclic garbage collector, in one place.

Both allocate millions of short-lived records (snapshots, containers, decisions) and leave few
reference cycles, so the collector's young collections mostly scan objects that outlive them
(docs/performance.md: "Fewer young collections", "The collector held off during a full sync").
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# At CPython's default, a young collection every 700 allocations, the collector took ~10% of a simulator run
# and more with each run kept in one process; at this threshold it takes ~1%, and memory is the same. The
# policy server does not use it: its full syncs freeze the mirror out of the scans, and its deltas measured
# the same with it (docs/performance.md).
YOUNG_COLLECTION_THRESHOLD = 50_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the young-generation threshold for a block (unless it is higher or off), then restore it."""
    old = gc.get_threshold()
    if old[0] == 0 or old[0] >= YOUNG_COLLECTION_THRESHOLD:
        yield
        return
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


# A full sync freezes what it built, and collects first only every this many syncs (and on a server's first, unless
# it settled at start): the mirror and the built-in policies leave no reference cycles (tests/bridge/test_service.py),
# so collecting at every sync scanned the whole heap (~10-14 ms of a 1,000-node sync) to free nothing. Counting
# syncs bounds what a policy's cycles could leave frozen to this many syncs' worth, though not in time: a rarely
# syncing server keeps it (`gc.get_freeze_count` would bound it by size, but walks the frozen heap: 2-4 ms).
COLLECT_EVERY = 8


class FrozenHeap:
    """Counts the full syncs frozen since the last collection, for `collector_paused` to bound what freezing traps."""

    def __init__(self) -> None:
        self.since = -1  # syncs frozen since the last collection; -1: none yet in this service

    def settle(self) -> None:
        """Collect once and freeze what a server starts with (modules, policy): its first full sync need not.

        Nothing is done when someone else turned the collector off.
        """
        if gc.isenabled():
            self._collect()

    def freeze(self) -> bool:
        """Freeze every object alive, collecting first (frozen ones too) when due; True if it collected."""
        if 0 <= self.since < COLLECT_EVERY - 1:
            self.since += 1
            gc.freeze()
            return False
        self._collect()
        return True

    def _collect(self) -> None:
        self.since = 0
        gc.unfreeze()  # what earlier syncs froze may be garbage now: this collection frees it
        gc.collect()
        gc.freeze()


@contextmanager
def collector_paused(full_syncs: Callable[[], int], heap: FrozenHeap) -> Iterator[None]:
    """Hold the collector off while a large request is answered; freeze the heap if `full_syncs()` grew meanwhile.

    A full sync of 1,000 nodes builds ~100k objects that all outlive it: the collections their
    allocation triggers find nothing to free. Frozen (`heap.freeze`: collected first on the first
    sync and every `COLLECT_EVERY` syncs), they are not scanned again by the full collections of
    the deltas that follow, which otherwise stall a heartbeat past the shim's deadline. A collector
    someone else turned off is left off, and nothing is frozen.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    synced = full_syncs()
    try:
        yield
    finally:
        try:
            if full_syncs() > synced:
                heap.freeze()
        finally:
            gc.enable()
