"""A random campaign holding emu's federation policies to Hadoop's classes.

Each case is a random federation (sub-clusters with random ids, states,
registration order, available memory; a machine list of random racks and
nodes), a random policy manager with random weights and headroom alpha,
random seeds for the policies' random sources, and then a sequence of
decisions asked of both: home sub-clusters for random queues, AM asks and
blacklists; splits of random asks (node, rack, ANY, unknown names, several
allocation ids, zero counts) after random headroom reports, with random
sub-clusters timed out. Every decision, or the refusal's message, must be
identical. `python -m emu.federation.fidelity --cases 200 --seed 1` prints
the agreement per policy and the first differences; `make test` runs a
smaller campaign (tests/hadoop/test_federation_policies_hadoop.py).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from emu.config.configuration import Configuration
from emu.federation import policies as fp
from emu.federation.hadoop_policies import Decision, HadoopPolicies, emu_split
from emu.scenario.java_random import JavaRandom

STATES = ("SC_RUNNING", "SC_RUNNING", "SC_RUNNING", "SC_UNHEALTHY", "SC_LOST", "SC_NEW")


@dataclass
class Case:
    """One random federation and the decisions to ask of it."""

    number: int
    members: list[tuple[str, str, int | None]]
    machines: list[tuple[str, str, str]]
    manager: str
    params: str
    home: str
    seeds: tuple[int, int, int]
    conf: dict[str, str]
    steps: list[tuple[str, Any]] = field(default_factory=list)


def make_case(rng: random.Random, number: int) -> Case:
    n = rng.randint(1, 6)
    if rng.random() < 0.5:
        ids = [f"SC-{i}" for i in rng.sample(range(1, 12), n)]
    else:
        ids = ["".join(rng.choices("abcxyzSC-0123", k=rng.randint(1, 6))) for _ in range(n)]
        ids = list(dict.fromkeys(ids))
    members = [
        (sid, rng.choice(STATES), None if rng.random() < 0.2 else rng.randint(0, 64) * 1024)
        for sid in ids
    ]
    if not any(st == "SC_RUNNING" for _, st, _ in members) and rng.random() < 0.8:
        sid, _, mb = members[0]
        members[0] = (sid, "SC_RUNNING", mb)
    racks = [f"rack{i}" for i in range(rng.randint(1, 5))]
    machines = []
    for sid in ids:
        for k in range(rng.randint(0, 5)):
            machines.append((f"{sid}-n{k}", sid, rng.choice(racks)))
    simple = rng.choice(sorted(fp.MANAGERS))
    router_name, amrm_name = fp.MANAGERS[simple]
    weighted = (
        fp.ROUTER_POLICIES[router_name].uses_weights or fp.AMRM_POLICIES[amrm_name].uses_weights
    )
    params = ""
    if weighted:
        info = fp.WeightedPolicyInfo(
            _weights(rng, ids), _weights(rng, ids), rng.choice([0.0, 0.25, 0.5, 1.0])
        )
        params = info.to_json()
    conf: dict[str, str] = {}
    if rng.random() < 0.2:
        conf[fp.FAIL_ON_ERROR] = "false"
    if rng.random() < 0.1:
        conf[fp.LEAST_LOAD_BLACKLIST] = rng.choice(ids)
    case = Case(
        number,
        members,
        machines,
        simple,
        params,
        rng.choice(ids),
        (rng.randint(0, 2**31), rng.randint(0, 2**31), rng.randint(0, 2**31)),
        conf,
    )
    names = [h for h, _, _ in machines] + racks + ["unknown-node", "/default-rack"]
    for _ in range(rng.randint(4, 10)):
        if rng.random() < 0.5:
            am: list[tuple[str, int]] | None = None
            roll = rng.random()
            if roll < 0.3 and names:
                am = [(rng.choice(names), 1), (rng.choice(racks), 1), (fp.ANY, 1)]
            elif roll < 0.4:
                am = [(fp.ANY, 1)]
            blacklist = rng.sample(ids, rng.randint(0, min(2, len(ids))))
            queue = rng.choice(["default", "root.a", "q1", "queue-" + str(rng.randint(0, 99))])
            case.steps.append(("home", (queue, am, blacklist)))
        else:
            for _ in range(rng.randint(0, 2)):
                case.steps.append(("notify", (rng.choice(ids), rng.randint(0, 32) * 1024)))
            asks = []
            for _ in range(rng.randint(1, 8)):
                aid = rng.randint(0, 3)
                name = rng.choice([fp.ANY, fp.ANY, *names])
                asks.append(
                    {
                        "allocation_request_id": aid,
                        "priority": 1,
                        "resource_name": name,
                        "num_containers": rng.choice([0, 1, 2, 3, 5, 8, 13, 20]),
                    }
                )
            timed_out = (
                rng.sample(ids, rng.randint(0, min(2, len(ids)))) if rng.random() < 0.3 else []
            )
            case.steps.append(("split", (asks, timed_out)))
    return case


def _weights(rng: random.Random, ids: list[str]) -> dict[str, float]:
    chosen = rng.sample(ids, rng.randint(1, len(ids)))
    w = {s: fp._f32(rng.choice([0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 1.0, 2.0])) for s in chosen}
    if not any(v > 0 for v in w.values()):
        w[chosen[0]] = 1.0
    return w


def emu_decisions(case: Case) -> list[tuple[str, Decision]]:
    """emu's answers to the case's steps (notify steps answer nothing)."""
    conf = Configuration()
    for k, v in case.conf.items():
        conf.set(k, v, "campaign")
    info = fp.WeightedPolicyInfo.parse(case.params) if case.params else fp.WeightedPolicyInfo()
    router_name, amrm_name = fp.MANAGERS[case.manager]
    draws = fp.Draws(
        JavaRandom(case.seeds[0]),
        JavaRandom(case.seeds[1]),
        JavaRandom(case.seeds[2]),
        JavaRandom(0),
    )
    resolver = fp.Resolver.of(case.machines)
    router = fp.ROUTER_POLICIES[router_name](info, draws, resolver)
    amrm = fp.AMRM_POLICIES[amrm_name](info, draws, resolver, case.home, conf)
    order = fp.concurrent_map_order([s for s, _, _ in case.members])
    states = {s: st for s, st, _ in case.members}
    mbs = {s: mb for s, _, mb in case.members}
    active = [s for s in order if states[s] == "SC_RUNNING"]
    members = fp.Membership(active, {s: mbs[s] for s in active})
    out: list[tuple[str, Decision]] = []
    for kind, args in case.steps:
        try:
            if kind == "home":
                queue, am, blacklist = args
                out.append((kind, router.home(queue, am, members, blacklist)))
            elif kind == "notify":
                amrm.notify(*args)
            else:
                asks, timed_out = args
                out.append(
                    (kind, emu_split(amrm.split([dict(a) for a in asks], members, timed_out)))
                )
        except fp.PolicyError as e:
            out.append((kind, f"error: {e}"))
    return out


def hadoop_decisions(case: Case) -> list[tuple[str, Decision]]:
    """Hadoop's classes' answers to the same steps."""
    h = HadoopPolicies(
        case.members, case.machines, case.manager, case.params, case.home, case.seeds, case.conf
    )
    try:
        out: list[tuple[str, Decision]] = []
        for kind, args in case.steps:
            if kind == "home":
                out.append((kind, h.home(*args)))
            elif kind == "notify":
                h.notify(*args)
            else:
                out.append((kind, h.split(*args)))
        return out
    finally:
        h.close()


@dataclass
class Campaign:
    cases: int = 0
    agreed: int = 0
    decisions: int = 0
    by_manager: Counter[str] = field(default_factory=Counter)
    agreed_by_manager: Counter[str] = field(default_factory=Counter)
    differences: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "identical": self.agreed,
            "decisions": self.decisions,
            "by_manager": {
                m: f"{self.agreed_by_manager[m]}/{n}" for m, n in sorted(self.by_manager.items())
            },
            "differences": self.differences[:5],
        }


def run_campaign(seed: int, count: int) -> Campaign:
    rng = random.Random(seed)
    c = Campaign()
    for number in range(count):
        case = make_case(rng, number)
        ours, theirs = emu_decisions(case), hadoop_decisions(case)
        c.cases += 1
        c.decisions += len(ours)
        c.by_manager[case.manager] += 1
        if ours == theirs:
            c.agreed += 1
            c.agreed_by_manager[case.manager] += 1
            continue
        step = next(i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b)
        asked = [s for s in case.steps if s[0] != "notify"]
        c.differences.append(
            {
                "case": number,
                "manager": case.manager,
                "decision": step,
                "asked": asked[step],
                "emu": ours[step],
                "hadoop": theirs[step],
                "members": case.members,
                "machines": case.machines,
                "params": case.params,
            }
        )
    return c


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m emu.federation.fidelity", description=__doc__)
    p.add_argument("--seed", type=int, default=1, help="the campaign's seed (default 1)")
    p.add_argument("--cases", type=int, default=200, help="random federations (default 200)")
    args = p.parse_args(argv)
    c = run_campaign(args.seed, args.cases)
    print(json.dumps(c.to_dict(), indent=1, default=str))
    print(
        f"{c.agreed} of {c.cases} random federations identical to Hadoop's policy classes "
        f"({c.decisions} decisions)"
    )
    return 0 if c.agreed == c.cases else 1


if __name__ == "__main__":
    sys.exit(main())
