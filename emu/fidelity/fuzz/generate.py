"""Random valid Hadoop inputs, one case per (campaign seed, case number).

A seeded generator rather than Hypothesis strategies: a case is a pure
function of the campaign's seed and its number, so any case is rebuilt from
those two numbers alone (`--case`), cases are drawn independently in as many
processes as there are cores, and the shrinker works on the case's structure
(jobs, tasks, nodes, settings) with reductions that keep it valid, which a
generic shrinker of the random choices would not. Each replay takes about a
second, too slow for Hypothesis's example budget and database to pay off.

Every setting is left out with some probability, so Hadoop's defaults are
tried as often as chosen values. Inputs Hadoop refuses at start-up are not
drawn: capacities sum to 100 per parent, a FIFO policy only on Fair leaves,
a fair parent never has a drf child, label capacities sum to 100 over the
queues that may use the label, no task larger than a node.
Capacity cases may have a parent whose leaves are created on submission
(flexible auto-created queues, apps naming root.<parent>.<user>) and
maximum-applications limits; Fair cases may have a queuePlacementPolicy
and apps naming "default" or a queue the allocation file does not declare.
FifoScheduler's cases name no preferred hosts: Hadoop's FifoScheduler fails on
some node-local placements (docs/fidelity.md, "What Hadoop's own schedulers
do wrong").
"""

from __future__ import annotations

import random

from emu.fidelity.fuzz.spec import FuzzCase, Job, Node, Queue, Tasks

KINDS = (
    "fifo",
    "capacity",
    "capacity-preemption",
    "capacity-labels",
    "fair",
    "fair-preemption",
)
USERS = ("alice", "bob", "carol", "dave")
CAP = "yarn.scheduler.capacity"
PREEMPT = "yarn.resourcemanager.monitor.capacity.preemption"
FAIR = "yarn.scheduler.fair"


def case_name(seed: int, number: int) -> str:
    return f"s{seed}-{number:05d}"


def kind_of(seed: int, number: int) -> str:
    """The class case `number` of campaign `seed` is drawn in: the classes
    take turns, so every class has its share of any campaign."""
    return KINDS[(number + seed) % len(KINDS)]


def generate(
    seed: int,
    number: int,
    kind: str | None = None,
    hadoop_version: str = "",
    multi_node: bool = False,
) -> FuzzCase:
    """Case `number` of the campaign with seed `seed`, for the Hadoop
    release `hadoop_version` (default 3.4.2). Under 3.5.0 a Capacity case
    also draws its asynchronous scheduling, and with `multi_node` its
    multi-node placement settings (after every other draw, so the rest of
    the case is the one 3.4.2 gets)."""
    kind = kind or kind_of(seed, number)
    rng = random.Random(f"{seed}:{number}:{kind}")
    nodes, nm_mb, nm_vc = _nodes(rng, labels=kind == "capacity-labels")
    case = FuzzCase(
        name=case_name(seed, number),
        kind=kind,
        scheduler=kind.split("-")[0],
        nodes=nodes,
        jobs=[],
        nm_memory_mb=nm_mb,
        nm_vcores=nm_vc,
        am_memory_mb=rng.choice((1024, 1024, 2048)),
    )
    if rng.random() < 0.2:
        case.site["yarn.scheduler.minimum-allocation-mb"] = str(rng.choice((512, 1024, 2048)))
    users = USERS[: rng.randint(1, len(USERS))]
    if case.scheduler == "capacity":
        leaves = _capacity(rng, case, users, preemption=kind == "capacity-preemption")
    elif case.scheduler == "fair":
        leaves = _fair(rng, case, preemption=kind == "fair-preemption")
    else:
        leaves = ["default"]
    labels = sorted({n.labels.split("(")[0] for n in nodes if n.labels})
    case.jobs = _jobs(rng, case, leaves, users, hosts=case.scheduler != "fifo", labels=labels)
    if hadoop_version:
        case.hadoop_version = hadoop_version
        if case.scheduler == "capacity" and hadoop_version == "3.5.0":
            _asynchronous(rng, case)
    if multi_node and case.scheduler == "capacity":
        _multi_node(rng, case)
    return case


MULTI_NODE_POLICY = (
    "org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement."
    "ResourceUsageMultiNodeLookupPolicy"
)


def _multi_node(rng: random.Random, case: FuzzCase) -> None:
    """Multi-node placement on: most often the resource-usage policy as
    operators name it at its default interval, else a shorter or longer
    interval, 0 (sorted on every use), or no policy at all (each app gets
    the first candidate)."""
    conf = case.scheduler_conf
    conf[CAP + ".multi-node-placement-enabled"] = "true"
    if _maybe(rng, 0.1):
        return  # no sorting policy: Hadoop's fallback, the first candidate
    name = rng.choice(("default", "default", "resource-based"))
    policy = CAP + ".multi-node-sorting.policy"
    conf[policy + ".names"] = name
    if name == "default" and _maybe(rng, 0.1):
        return  # a sorter runs (`default` needs no class there), no queue names it
    conf[policy] = name
    conf[f"{policy}.{name}.class"] = MULTI_NODE_POLICY  # a queue's policy needs its class
    if _maybe(rng, 0.4):
        conf[f"{policy}.{name}.sorting-interval.ms"] = str(rng.choice((0, 0, 100, 500, 3000)))


def _asynchronous(rng: random.Random, case: FuzzCase) -> None:
    """3.5.0's asynchronous scheduling: its defaults most often (on, every
    5 ms, one thread), else a longer interval, more threads, or off."""
    prefix = CAP + ".schedule-asynchronously"
    if _maybe(rng, 0.1):
        case.scheduler_conf[prefix + ".enable"] = "false"
        return
    if _maybe(rng, 0.3):
        case.scheduler_conf[prefix + ".scheduling-interval-ms"] = str(
            rng.choice((1, 20, 100, 1000))
        )
    if _maybe(rng, 0.2):
        case.scheduler_conf[prefix + ".maximum-threads"] = str(rng.choice((2, 3)))


def _maybe(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def _nodes(rng: random.Random, labels: bool) -> tuple[list[Node], int, int]:
    count = rng.randint(2, 12)
    racks = rng.randint(1, min(3, count))
    nodes = [Node(f"node{i + 1}", f"rack{i % racks + 1}") for i in range(count)]
    if labels:
        kinds = [("x", True), ("y", rng.random() < 0.5)][: rng.randint(1, 2)]
        for name, exclusive in kinds:
            for n in rng.sample(nodes, rng.randint(1, max(1, count // 3))):
                if not n.labels:
                    n.labels = name if exclusive else f"{name}(exclusive=false)"
    return nodes, rng.choice((4096, 8192, 8192, 16384)), rng.choice((4, 8, 8, 16))


def _jobs(
    rng: random.Random,
    case: FuzzCase,
    leaves: list[str],
    users: tuple[str, ...],
    hosts: bool,
    labels: list[str],
) -> list[Job]:
    largest = min(case.nm_memory_mb, 8192)
    sizes = [m for m in (512, 1024, 1024, 1536, 2048, 3072, 4096) if m <= largest]
    jobs = []
    for i in range(rng.randint(6, 20)):
        groups = [
            Tasks(
                count=rng.randint(1, 12),
                duration_ms=rng.randrange(3_000, 90_001, 1000),
                memory_mb=rng.choice(sizes),
                vcores=rng.randint(1, min(4, case.nm_vcores)),
                priority=20,
            )
        ]
        if hosts and _maybe(rng, 0.3):
            n = rng.choice(case.nodes)
            groups[0].host = f"/{n.rack}/{n.name}"
        if _maybe(rng, 0.4):
            groups.append(
                Tasks(
                    count=rng.randint(1, 5),
                    duration_ms=rng.randrange(3_000, 60_001, 1000),
                    memory_mb=rng.choice(sizes),
                    vcores=1,
                    priority=10,
                    type="reduce",
                )
            )
        user = rng.choice(users)
        job = Job(
            id=f"job_{i + 1}",
            queue=rng.choice(leaves).replace("%user", user),
            user=user,
            start_ms=rng.randrange(0, 180_001, 500),
            tasks=groups,
        )
        if labels and _maybe(rng, 0.4):
            job.label = rng.choice(labels)
        jobs.append(job)
    jobs.sort(key=lambda j: j.start_ms)
    return jobs


# -- CapacityScheduler ----------------------------------------------------------


def _split(rng: random.Random, total: int, parts: int, least: int) -> list[int]:
    """`parts` integers of at least `least` summing to `total`."""
    cuts = sorted(rng.sample(range(1, total - least * parts + parts), parts - 1))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, total - least * parts + parts], strict=True)]
    return [s - 1 + least for s in sizes]


def _capacity(
    rng: random.Random, case: FuzzCase, users: tuple[str, ...], preemption: bool
) -> list[str]:
    labels = case.kind == "capacity-labels"
    modes = ("percent", "percent", "percent", "weight", "absolute")
    mode = "percent" if labels else rng.choice(modes)
    root = case.root
    names = iter("abcd")
    root.children = [Queue(next(names)) for _ in range(rng.randint(2, 4))]
    if not labels and _maybe(rng, 0.4):
        parent = rng.choice(root.children)
        parent.children = [Queue(f"{parent.name}{i + 1}") for i in range(rng.randint(2, 3))]
    cluster = (case.nm_memory_mb * len(case.nodes), case.nm_vcores * len(case.nodes))
    _capacities(rng, root, mode, cluster)
    auto = None
    if not labels and mode != "absolute" and _maybe(rng, 0.2):
        # A parent whose leaves are made on submission (flexible auto-created
        # queues); an app names root.<parent>.<its user>.
        auto = rng.choice([q for q in root.children if not q.children])
        auto.settings["auto-queue-creation-v2.enabled"] = "true"
        if _maybe(rng, 0.5):
            auto.settings["auto-queue-creation-v2.leaf-template.user-limit-factor"] = rng.choice(
                ("1", "2", "100")
            )
        if _maybe(rng, 0.3):
            auto.settings["auto-queue-creation-v2.leaf-template.maximum-capacity"] = str(
                rng.choice((50, 80, 100))
            )
    leaves = [(path, q) for path, q in root.leaves() if q is not auto]
    for _, leaf in leaves:
        s = leaf.settings
        if _maybe(rng, 0.5):
            s["user-limit-factor"] = rng.choice(("1", "1.5", "2", "3", "100"))
        if _maybe(rng, 0.3):
            s["minimum-user-limit-percent"] = rng.choice(("25", "33", "50", "100"))
        if _maybe(rng, 0.3):
            s["maximum-am-resource-percent"] = rng.choice(("0.1", "0.2", "0.3", "0.5"))
        if _maybe(rng, 0.3):
            s["ordering-policy"] = rng.choice(("fifo", "fair"))
        if _maybe(rng, 0.15):
            s["max-parallel-apps"] = str(rng.randint(1, 5))
        if _maybe(rng, 0.08):
            s["maximum-applications"] = str(rng.randint(2, 8))
        if _maybe(rng, 0.15):
            s["priority"] = str(rng.randint(0, 3))
        if _maybe(rng, 0.15):
            # Hadoop refuses a weight above 100 / minimum-user-limit-percent.
            most = 100 / int(s.get("minimum-user-limit-percent", "100"))
            weights = [w for w in (0.25, 0.5, 1.0, 2.0, 3.0) if w <= most]
            s[f"user-settings.{rng.choice(users)}.weight"] = str(rng.choice(weights))
    conf = case.scheduler_conf
    if _maybe(rng, 0.5):
        conf[f"{CAP}.resource-calculator"] = "org.apache.hadoop.yarn.util.resource." + rng.choice(
            ("DefaultResourceCalculator", "DominantResourceCalculator")
        )
    if _maybe(rng, 0.4):
        conf[f"{CAP}.node-locality-delay"] = str(rng.choice((-1, 0, 1, 3, 10, 20, 40)))
    if _maybe(rng, 0.2):
        conf[f"{CAP}.rack-locality-additional-delay"] = str(rng.choice((-1, 0, 5, 20)))
    if _maybe(rng, 0.2):
        conf[f"{CAP}.per-node-heartbeat.multiple-assignments-enabled"] = rng.choice(
            ("true", "false")
        )
    if _maybe(rng, 0.2):
        conf[f"{CAP}.per-node-heartbeat.maximum-container-assignments"] = str(
            rng.choice((1, 2, 5, 100))
        )
    if _maybe(rng, 0.2):
        conf[f"{CAP}.per-node-heartbeat.maximum-offswitch-assignments"] = str(rng.randint(1, 3))
    if _maybe(rng, 0.2):
        conf[f"{CAP}.maximum-am-resource-percent"] = rng.choice(("0.1", "0.2", "0.5"))
    if _maybe(rng, 0.15):
        user = rng.choice(users)
        conf[f"{CAP}.queue-mappings"] = f"u:{user}:{rng.choice(leaves)[1].name}"
        conf[f"{CAP}.queue-mappings-override.enable"] = rng.choice(("true", "false"))
    if _maybe(rng, 0.05):
        conf[f"{CAP}.maximum-applications"] = str(rng.randint(4, 12))
    if labels:
        _labels(rng, case)
    if preemption or (labels and _maybe(rng, 0.3)):
        _capacity_preemption(rng, case)
    targets = [leaf.name for _, leaf in leaves]
    if auto is not None:
        targets += [f"root.{auto.name}.%user"] * max(1, len(targets) // 2)
    return targets


def _capacities(rng: random.Random, parent: Queue, mode: str, resource: tuple[int, int]) -> None:
    kids = parent.children
    if not kids:
        return
    if mode == "percent":
        for q, share in zip(kids, _split(rng, 100, len(kids), 5), strict=True):
            q.settings["capacity"] = str(share)
            if _maybe(rng, 0.6):
                q.settings["maximum-capacity"] = str(rng.randint(share, 100))
            _capacities(rng, q, mode, resource)
    elif mode == "weight":
        for q in kids:
            q.settings["capacity"] = f"{rng.randint(1, 5)}w"
            if _maybe(rng, 0.3):
                q.settings["maximum-capacity"] = str(rng.randint(30, 100))
            _capacities(rng, q, mode, resource)
    else:
        mem, vc = resource
        if mem < 512 * len(kids) or vc < len(kids):
            # Too small to split: children of no resources are not "absolute"
            # to Hadoop, which then refuses them under a parent in resources.
            parent.children = []
            return
        # Children take at most their parent's resources (Hadoop refuses more).
        shares = _split(rng, 100, len(kids), 5)
        scale = rng.choice((0.6, 0.8, 1.0))
        for q, share in zip(kids, shares, strict=True):
            # Rounded down, so the children never add up past their parent.
            m = int(mem * share * scale / 100) // 512 * 512
            v = int(vc * share * scale / 100)
            q.settings["capacity"] = f"[memory={m},vcores={v}]"
            if _maybe(rng, 0.5):
                q.settings["maximum-capacity"] = f"[memory={mem},vcores={vc}]"
            _capacities(rng, q, mode, (m, v))


def _labels(rng: random.Random, case: FuzzCase) -> None:
    labels = sorted({n.labels.split("(")[0] for n in case.nodes if n.labels})
    kids = case.root.children
    for label in labels:
        case.root.settings[f"accessible-node-labels.{label}.capacity"] = "100"
        users = rng.sample(kids, rng.randint(1, len(kids)))
        for q, share in zip(users, _split(rng, 100, len(users), 5), strict=True):
            have = q.settings.get("accessible-node-labels", "")
            q.settings["accessible-node-labels"] = f"{have},{label}" if have else label
            q.settings[f"accessible-node-labels.{label}.capacity"] = str(share)
            if _maybe(rng, 0.3):
                q.settings[f"accessible-node-labels.{label}.maximum-capacity"] = str(
                    rng.randint(share, 100)
                )
            if _maybe(rng, 0.2):
                q.settings["default-node-label-expression"] = label


def _capacity_preemption(rng: random.Random, case: FuzzCase) -> None:
    site = case.site
    site["yarn.resourcemanager.scheduler.monitor.enable"] = "true"
    site["yarn.resourcemanager.scheduler.monitor.policies"] = (
        "org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity."
        "ProportionalCapacityPreemptionPolicy"
    )
    draws = {
        "monitoring_interval": (1000, 3000, 5000),
        "max_wait_before_kill": (1000, 2000, 5000, 15000),
        "total_preemption_per_round": (0.05, 0.1, 0.2, 0.5, 1.0),
        "max_ignored_over_capacity": (0, 0.05, 0.1, 0.2),
        "natural_termination_factor": (0.1, 0.2, 0.5, 1.0),
    }
    for key, values in draws.items():
        if _maybe(rng, 0.5):
            site[f"{PREEMPT}.{key}"] = str(rng.choice(values))
    if _maybe(rng, 0.3):
        site[f"{PREEMPT}.intra-queue-preemption.enabled"] = "true"
        if _maybe(rng, 0.5):
            site[f"{PREEMPT}.intra-queue-preemption.preemption-order-policy"] = rng.choice(
                ("userlimit_first", "priority_first")
            )
        if _maybe(rng, 0.3):
            site[f"{PREEMPT}.intra-queue-preemption.minimum-threshold"] = str(
                rng.choice((0, 0.1, 0.5))
            )
        if _maybe(rng, 0.3):
            site[f"{PREEMPT}.intra-queue-preemption.max-allowable-limit"] = str(
                rng.choice((0.1, 0.2, 0.5))
            )
    for _, leaf in case.root.leaves():
        if _maybe(rng, 0.1):
            leaf.settings["disable_preemption"] = "true"


# -- FairScheduler ---------------------------------------------------------------


def _fair(rng: random.Random, case: FuzzCase, preemption: bool) -> list[str]:
    root = case.root
    names = iter("abcd")
    root.children = [Queue(next(names)) for _ in range(rng.randint(2, 4))]
    if _maybe(rng, 0.4):
        parent = rng.choice(root.children)
        parent.children = [Queue(f"{parent.name}{i + 1}") for i in range(rng.randint(2, 3))]
    top = rng.choice(("fair", "drf", "fair", "drf", ""))
    if top:
        case.scheduler_conf["defaultQueueSchedulingPolicy"] = top
    mem, vc = case.nm_memory_mb * len(case.nodes), case.nm_vcores * len(case.nodes)

    def resources(share: float) -> str:
        return f"{max(1024, int(mem * share) // 1024 * 1024)} mb, {max(1, int(vc * share))} vcores"

    def settle(q: Queue, parent_policy: str) -> None:
        s = q.settings
        if _maybe(rng, 0.5):
            s["weight"] = rng.choice(("0.5", "1", "2", "3", "4"))
        if _maybe(rng, 0.25):
            s["minResources"] = resources(rng.choice((0.1, 0.2, 0.3, 0.5)))
        if _maybe(rng, 0.25):
            s["maxResources"] = resources(rng.choice((0.3, 0.5, 0.8)))
        if not q.children and _maybe(rng, 0.15):
            s["maxRunningApps"] = str(rng.randint(1, 4))
        if not q.children and _maybe(rng, 0.15):
            s["maxAMShare"] = rng.choice(("0.1", "0.3", "0.5", "1.0", "-1.0"))
        # A queue without a policy of its own takes defaultQueueSchedulingPolicy,
        # whatever its parent's; Hadoop refuses a drf queue under a fair parent.
        policy = top or "fair"
        if _maybe(rng, 0.3):
            allowed = ["fair", "drf"] if parent_policy == "drf" else ["fair"]
            if not q.children:
                allowed.append("fifo")
            policy = rng.choice(allowed)
            s["schedulingPolicy"] = policy
        elif policy == "drf" and parent_policy == "fair":
            policy = s["schedulingPolicy"] = "fair"
        if q.children and _maybe(rng, 0.2):
            s["maxChildResources"] = resources(rng.choice((0.2, 0.4)))
        if preemption:
            if _maybe(rng, 0.5):
                s["fairSharePreemptionTimeout"] = str(rng.choice((1, 3, 5, 10, 30)))
            if _maybe(rng, 0.4):
                s["fairSharePreemptionThreshold"] = rng.choice(("0.2", "0.5", "0.8", "1.0"))
            if "minResources" in s and _maybe(rng, 0.6):
                s["minSharePreemptionTimeout"] = str(rng.choice((1, 3, 5, 10)))
            if _maybe(rng, 0.1):
                s["allowPreemptionFrom"] = "false"
        for c in q.children:
            settle(c, policy)

    for q in root.children:
        settle(q, top or "fair")
    if _maybe(rng, 0.3):
        case.placement = _placement_rules(rng, root)
    conf = case.scheduler_conf
    if _maybe(rng, 0.15):
        conf["queueMaxAMShareDefault"] = rng.choice(("0.2", "0.5", "1.0"))
    if _maybe(rng, 0.1):
        conf["userMaxAppsDefault"] = str(rng.randint(2, 6))
    site = case.site
    if _maybe(rng, 0.3):
        site[f"{FAIR}.assignmultiple"] = "true"
        if _maybe(rng, 0.6):
            site[f"{FAIR}.dynamic.max.assign"] = rng.choice(("true", "false"))
        if _maybe(rng, 0.6):
            site[f"{FAIR}.max.assign"] = str(rng.choice((-1, 1, 2, 3, 5)))
    if _maybe(rng, 0.3):
        site[f"{FAIR}.locality.threshold.node"] = rng.choice(("0.1", "0.3", "0.5", "0.9"))
    if _maybe(rng, 0.2):
        site[f"{FAIR}.locality.threshold.rack"] = rng.choice(("0.1", "0.3", "0.5", "0.9"))
    if _maybe(rng, 0.1):
        site[f"{FAIR}.sizebasedweight"] = "true"
    if preemption:
        site[f"{FAIR}.preemption"] = "true"
        if _maybe(rng, 0.5):
            site[f"{FAIR}.preemption.cluster-utilization-threshold"] = rng.choice(
                ("0.5", "0.7", "0.8", "0.9")
            )
        if _maybe(rng, 0.5):
            site[f"{FAIR}.waitTimeBeforeKill"] = str(rng.choice((1000, 3000, 10000, 15000)))
        if _maybe(rng, 0.3):
            site[f"{FAIR}.waitTimeBeforeNextStarvationCheck"] = str(rng.choice((1000, 5000, 10000)))
        if _maybe(rng, 0.4):
            conf["defaultFairSharePreemptionTimeout"] = str(rng.choice((2, 5, 15)))
        if _maybe(rng, 0.3):
            conf["defaultFairSharePreemptionThreshold"] = rng.choice(("0.3", "0.5", "0.8"))
        if _maybe(rng, 0.3):
            conf["defaultMinSharePreemptionTimeout"] = str(rng.choice((2, 5, 15)))
    leaves = [path.removeprefix("root.") for path, _ in root.leaves()]
    # The queue a user gets when the trace names none of its own
    # ("default"), and one the allocation file does not declare.
    extra = ["default"] if _maybe(rng, 0.3) else []
    if _maybe(rng, 0.2):
        extra.append("z")
    return leaves + extra


def _placement_rules(rng: random.Random, root: Queue) -> list[dict[str, str]]:
    """A queuePlacementPolicy: rules that may pass, then one that always
    decides, as Hadoop requires of its last rule (`specified` never does:
    it passes an app that names "default")."""
    rules: list[dict[str, str]] = []
    if _maybe(rng, 0.85):
        rules.append({"name": "specified", "create": rng.choice(("true", "false"))})
    if _maybe(rng, 0.3):
        rules.append({"name": "user", "create": "false"})
    leaves = [path.removeprefix("root.") for path, _ in root.leaves()]
    last = rng.choice(("user", "default", "default", "reject"))
    if last == "user" and not any(r["name"] == "user" for r in rules):
        rules.append({"name": "user", "create": "true"})
    elif last == "reject":
        rules.append({"name": "reject"})
    else:
        rules.append({"name": "default", "queue": rng.choice(leaves)})
    return rules
