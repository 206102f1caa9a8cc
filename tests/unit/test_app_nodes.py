"""`RMContext.app_nodes`: the nodes an app has had containers on, where its
cleanup may be due when it ends (app.py `_completed` looks only there,
not at every node: 10,000 of them per finished app at P2)."""

from __future__ import annotations

from emu.rm.scheduler.locality import ANY
from emu.testing.cluster import ask, fifo_conf
from emu.testing.rm import RMHarness


async def test_the_nodes_an_app_ran_on_are_recorded_as_containers_are_placed(
    autojump_clock,
) -> None:
    rm = RMHarness(fifo_conf())
    for host in ("h1", "h2", "h3"):
        rm.add_node(host)
    app_id = rm.submit("a")
    rm.start_am(app_id, "h1")
    assert rm.ctx.app_nodes[app_id] == {"h1"}  # its AM container
    rm.allocate(app_id, [ask(20, ANY, 1)])
    rm.heartbeat("h2")
    assert rm.ctx.app_nodes[app_id] == {"h1", "h2"}
    assert all(app_id in rm.ctx.nodes[n].running_apps for n in ("h1", "h2"))
    assert app_id not in rm.ctx.nodes["h3"].running_apps
