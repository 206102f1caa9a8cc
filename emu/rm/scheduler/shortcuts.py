"""The switch for scheduler shortcuts: work skipped or reordered on the hot
path that must leave every output byte for byte as it was.

Each shortcut keeps its plain form beside it and asks `enabled()` which to
take, so a test can replay the same inputs both ways and compare outputs
(tests/integration/test_shortcuts.py). `EMU_SHORTCUTS=0` in the environment
turns them all off for a whole run, to tell a suspected shortcut bug from a
scheduling one.

Shortcuts today (FairScheduler):
- each leaf queue keeps its runnable apps with unmet demand as they change,
  instead of every node update filtering all of its apps, and keeps them in
  policy order (a sorted list of each app's key, `Policy.app_key`, moved
  when the app's usage, demand or runnability changes), instead of every
  node update sorting them (FSLeafQueue.reorder);
- an app with unmet demand but no outstanding ask (its demand is stale
  until the next update) is not offered the node: the one thing the offer
  does, record why it took nothing, is done directly, and then the app is
  skipped by later offers until it asks again, leaves the queue's wanting
  apps, or another decision is recorded for it (FSLeafQueue.settle);
- with delay scheduling off, an app that declined a node with "no node
  fits", has no blacklist and may not reserve (no ask at the reservation
  threshold, or off-switch only while holding all the reservations it may)
  is "silent": a node that none of the silent apps' asks fits is offered
  to the other apps alone, in the same order, and the AM limit that the
  skipped AM-limit checks would compute is set as they would leave it.
  Silence ends with a new decision for the app id, a change of its asks,
  blacklist, AM or reservations, nodes coming or going, or a new order
  (FSLeafQueue.silence);
- the drf and fair comparators' order is reached through a sort key when it
  is a plain lexicographic order (no needy item, positive weights);
- a queue's max share is kept until the cluster, the configured maximum or
  the min share is replaced;
- the root's available resource (cluster less used) is kept until either
  is replaced;
- computeShares works out neighbouring schedulables with the same weight,
  the same min and max share objects and the same activity once, as one
  group (emu.rm.scheduler.fair.shares).

FifoScheduler: a node update visits only the attempts with outstanding
asks (kept in submission order as their demand changes), not every one.

Every scheduler: a node heartbeat that reports no container, from a healthy
running node with nothing to clean up, is answered without its
STATUS_UPDATE and NODE_UPDATE when `Scheduler.skip_quiet_node_update` proves
the pass would change nothing (FIFO: no attempt has an outstanding ask;
Capacity: no reservation on the node, and no outstanding ask or no room on
the node for a minimum allocation; Fair: see FairScheduler._note_quiet). The node's liveness,
response id and reply, and the dispatcher's counts, move as if it had run.

Beyond the schedulers, the same switch turns the protocol's frames on and
off: with them, `mem://` messages reach their receiver as validated maps
without a msgpack round trip (`emu.protocol.Frame`), and the lean
in-process forms (node heartbeat batches, idle allocates and their
replies) as objects; off, all of them travel as bytes.
"""

from __future__ import annotations

import os
from typing import Final

from emu import protocol as P


class _Switch:
    """The on/off state. An attribute of one object bound for good rather
    than a module global: compiled, reading it is a field load, where a
    global that may be reassigned is a dict lookup (the hot paths ask
    several times per node heartbeat, ~0.5 % of a 10,000-node replay)."""

    __slots__ = ("on",)

    def __init__(self, on: bool) -> None:
        self.on = on


_switch: Final = _Switch(os.environ.get("EMU_SHORTCUTS", "1") != "0")


def enabled() -> bool:
    """Whether the shortcuts are on (the default)."""
    return _switch.on


def set_enabled(on: bool) -> None:
    """Turn the shortcuts on or off for what runs next in this process."""
    _switch.on = on
    P.set_frames(on)
