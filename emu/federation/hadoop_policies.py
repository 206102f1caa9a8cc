"""Hadoop's own federation policy classes, run on emu's inputs through the
JVM (JPype), to hold `emu.federation.policies` to them decision by decision.

A `HadoopPolicies` is one federation as Hadoop's classes see it: a
MemoryFederationStateStore with the sub-clusters registered in order and in
their states (available memory in their capability), a machine list file
for the DefaultSubClusterResolverImpl, the facade's cache off, and the
policy manager's router and AMRMProxy policies built from the same
parameters emu reads. Their random sources are seeded as `Draws` seeds
emu's: `FederationPolicyUtils.setRand`, and by reflection the
UniformRandomRouterPolicy's and the LocalityMulticastAMRMProxyPolicy's
`rand` fields. Needs `make hadoop` (the RM's classpath holds
hadoop-yarn-server-common).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from emu.federation.policies import ANY, PACKAGE

Decision = str | dict[str, list[tuple[int, str, int]]]
"""A sub-cluster id, or a split as {sub-cluster: [(allocation id, name,
count), ...]}; an error is "error: <message>"."""


class HadoopPolicies:
    """Hadoop's router and AMRMProxy policies of `manager` over one federation."""

    def __init__(
        self,
        members: Sequence[tuple[str, str, int | None]],
        machines: Sequence[tuple[str, str, str]],
        manager: str,
        params: str,
        home: str,
        seeds: tuple[int, int, int],
        conf: dict[str, str] | None = None,
    ) -> None:
        import jpype

        from emu.hadoop import bridge

        bridge.start()
        self.jpype = jpype
        J = jpype.JClass
        self._dir = tempfile.TemporaryDirectory(prefix="emu-fed-")
        machine_list = Path(self._dir.name) / "machines.txt"
        machine_list.write_text("".join(f"{h},{s},{r}\n" for h, s, r in machines))
        yconf = J("org.apache.hadoop.yarn.conf.YarnConfiguration")()
        yconf.setInt("yarn.federation.cache-ttl.secs", 0)
        yconf.set("yarn.federation.machine-list", str(machine_list))
        for k, v in (conf or {}).items():
            yconf.set(k, v)
        store = J(
            "org.apache.hadoop.yarn.server.federation.store.impl.MemoryFederationStateStore"
        )()
        store.init(yconf)
        facade_cls = J("org.apache.hadoop.yarn.server.federation.utils.FederationStateStoreFacade")
        facade = facade_cls.getInstance(yconf)
        facade.reinitialize(store, yconf)
        self.SubClusterId = J("org.apache.hadoop.yarn.server.federation.store.records.SubClusterId")
        info = J("org.apache.hadoop.yarn.server.federation.store.records.SubClusterInfo")
        state = J("org.apache.hadoop.yarn.server.federation.store.records.SubClusterState")
        register = J(
            "org.apache.hadoop.yarn.server.federation.store.records.SubClusterRegisterRequest"
        )
        for sid, st, mb in members:
            capability = "" if mb is None else json.dumps({"clusterMetrics": {"availableMB": mb}})
            store.registerSubCluster(
                register.newInstance(
                    info.newInstance(
                        self.SubClusterId.newInstance(sid),
                        "h:1",
                        "h:2",
                        "h:3",
                        "h:4",
                        state.valueOf(st),
                        1,
                        capability,
                    )
                )
            )
        utils = J(f"{PACKAGE}.FederationPolicyUtils")
        name = manager if "." in manager else f"{PACKAGE}.manager.{manager}"
        buffer = J("java.nio.ByteBuffer").wrap(J("java.lang.String")(params).getBytes("UTF-8"))
        pconf = J(
            "org.apache.hadoop.yarn.server.federation.store.records.SubClusterPolicyConfiguration"
        )
        policy_conf = pconf.newInstance("default", name, buffer)
        context = J(f"{PACKAGE}.FederationPolicyInitializationContext")
        # A resolver of this case's machine list (the facade, a JVM-wide
        # singleton, keeps the one it made first).
        resolver = J(
            "org.apache.hadoop.yarn.server.federation.resolver.DefaultSubClusterResolverImpl"
        )()
        resolver.setConf(yconf)
        resolver.load()
        mgr = utils.instantiatePolicyManager(name)
        mgr.setQueue("default")
        self.router = mgr.getRouterPolicy(context(policy_conf, resolver, facade, None), None)
        self.amrm = mgr.getAMRMPolicy(
            context(policy_conf, resolver, facade, self.SubClusterId.newInstance(home)), None
        )
        shared, uniform, multicast = seeds
        utils.setRand(shared)
        random = J("java.util.Random")
        if self.router.getClass().getSimpleName() == "UniformRandomRouterPolicy":
            field = self.router.getClass().getDeclaredField("rand")
            field.setAccessible(True)
            field.set(self.router, random(uniform))
        lm = J(f"{PACKAGE}.amrmproxy.LocalityMulticastAMRMProxyPolicy")
        field = lm.class_.getDeclaredField("rand")
        field.setAccessible(True)
        field.set(None, random(multicast))
        self._J = J

    def close(self) -> None:
        self._dir.cleanup()

    def _error(self, e: Any) -> str:
        return f"error: {e.getMessage()}"

    def home(self, queue: str, am_asks: list[tuple[str, int]] | None, blacklist: list[str]) -> str:
        J = self._J
        records = "org.apache.hadoop.yarn.api.records."
        ctx = J(records + "ApplicationSubmissionContext").newInstance(
            J(records + "ApplicationId").newInstance(1, 1),
            "app",
            queue,
            J(records + "Priority").newInstance(0),
            None,
            False,
            False,
            2,
            J(records + "Resource").newInstance(1024, 1),
            "YARN",
        )
        if am_asks is not None:
            lst = J("java.util.ArrayList")()
            for name, n in am_asks:
                lst.add(self._request(0, 0, name, n))
            ctx.setAMContainerResourceRequests(lst)
        bl = J("java.util.ArrayList")()
        for s in blacklist:
            bl.add(self.SubClusterId.newInstance(s))
        try:
            return str(self.router.getHomeSubcluster(ctx, bl).getId())
        except self.jpype.JException as e:
            return self._error(e)

    def _request(self, aid: int, priority: int, name: str, n: int) -> Any:
        J = self._J
        records = "org.apache.hadoop.yarn.api.records."
        r = J(records + "ResourceRequest").newInstance(
            J(records + "Priority").newInstance(priority),
            name,
            J(records + "Resource").newInstance(1024, 1),
            n,
            True,
        )
        r.setAllocationRequestId(aid)
        return r

    def notify(self, sid: str, available_mb: int) -> None:
        J = self._J
        records = "org.apache.hadoop.yarn.api.records."
        response = J("org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse").newInstance(
            0,
            J("java.util.ArrayList")(),
            J("java.util.ArrayList")(),
            J("java.util.ArrayList")(),
            J(records + "Resource").newInstance(available_mb, 1),
            None,
            0,
            None,
            J("java.util.ArrayList")(),
        )
        self.amrm.notifyOfResponse(self.SubClusterId.newInstance(sid), response)

    def split(self, asks: list[dict[str, Any]], timed_out: list[str]) -> Decision:
        J = self._J
        lst = J("java.util.ArrayList")()
        for a in asks:
            lst.add(
                self._request(
                    a.get("allocation_request_id", 0),
                    a.get("priority", 1),
                    a["resource_name"],
                    a["num_containers"],
                )
            )
        gone = J("java.util.HashSet")()
        for s in timed_out:
            gone.add(self.SubClusterId.newInstance(s))
        try:
            answer = self.amrm.splitResourceRequests(lst, gone)
        except self.jpype.JException as e:
            return self._error(e)
        out: dict[str, list[tuple[int, str, int]]] = {}
        for entry in answer.entrySet():
            out[str(entry.getKey().getId())] = [
                (
                    int(r.getAllocationRequestId()),
                    str(r.getResourceName()),
                    int(r.getNumContainers()),
                )
                for r in entry.getValue()
            ]
        return dict(sorted(out.items()))


def emu_split(split: dict[str, list[dict[str, Any]]]) -> Decision:
    """emu's split in `Decision`'s form."""
    return {
        sid: [
            (a.get("allocation_request_id", 0), a["resource_name"], a["num_containers"])
            for a in asks
        ]
        for sid, asks in sorted(split.items())
    }


__all__ = ["ANY", "Decision", "HadoopPolicies", "emu_split"]
