"""The benchmark workload as a federation: the same nodes split by racks
into sub-clusters, each under the workload's FairScheduler configuration,
the same SLS trace routed by Hadoop's WeightedLocalityPolicyManager with
equal weights (a home drawn by weight, asks spread by locality).

    python -m emu.bench.federation INPUTS SUBCLUSTERS  # writes INPUTS/federation-N.toml
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from emu.scenario.sls import iter_json_objects

MANAGER = "org.apache.hadoop.yarn.server.federation.policies.manager.WeightedLocalityPolicyManager"


def equal_weights(ids: list[str], alpha: float = 0.5) -> str:
    """WeightedPolicyInfo JSON giving every sub-cluster weight 1 for both policies."""
    entries = [{"key": {"id": s}, "value": "1.0"} for s in ids]
    return json.dumps(
        {
            "routerPolicyWeights": {"entry": entries},
            "amrmPolicyWeights": {"entry": entries},
            "headroomAlpha": str(alpha),
        },
        separators=(",", ":"),
    )


def write_federation(inputs: Path, subclusters: int, scheduler: str = "fair") -> Path:
    """`inputs/federation-<n>.toml` (and its per-sub-cluster node files):
    `inputs/nodes.json`'s racks dealt out in turn to `subclusters`
    sub-clusters `SC-1`..; returns the file's path."""
    racks = [obj for _, obj in iter_json_objects(str(inputs / "nodes.json"))]
    if subclusters < 1 or subclusters > len(racks):
        raise ValueError(f"{subclusters} sub-clusters for {len(racks)} racks")
    ids = [f"SC-{i + 1}" for i in range(subclusters)]
    parts: list[list[dict[str, object]]] = [[] for _ in ids]
    for k, rack in enumerate(racks):
        parts[k % subclusters].append(rack)
    d = inputs / f"federation-{subclusters}"
    d.mkdir(exist_ok=True)
    blocks = []
    for sid, part in zip(ids, parts, strict=True):
        (d / f"{sid}-nodes.json").write_text("\n".join(json.dumps(r) for r in part) + "\n")
        blocks.append(
            f'[[subclusters]]\nid = "{sid}"\nnodes_file = "{sid}-nodes.json"\n'
            f'node_memory_mb = 32768\nnode_vcores = 16\nconf_dir = "../{scheduler}"\n'
        )
    text = (
        f'name = "federation-{subclusters}"\nseed = 1\n\n[federation]\n'
        f'"yarn.federation.policy-manager" = "{MANAGER}"\n'
        f"\"yarn.federation.policy-manager-params\" = '{equal_weights(ids)}'\n\n"
        + "\n".join(blocks)
        + '\n[trace]\ntype = "sls"\nfiles = ["../trace.json"]\n'
    )
    path = d / "federation.toml"
    path.write_text(text)
    return path


def main(argv: list[str]) -> int:
    print(write_federation(Path(argv[0]), int(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
