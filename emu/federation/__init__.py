"""YARN Federation: sub-cluster RMs behind a Router, AMs behind an AMRMProxy.

- `description`  the federation file: sub-clusters (nodes, configuration),
                 the policy manager and its parameters, the workload.
- `policies`     Hadoop's router and AMRMProxy policies and policy managers,
                 with their parameters as Hadoop serializes them.
- `state_store`  the federation state store: membership, app -> home.
- `router`       the Router actor: the client protocol over the sub-clusters.
- `amrmproxy`    the AMRMProxy actor: an AM's allocates split over them.
- `simulation`   the whole federation in one process on the virtual clock.
- `run`          one replay and the files it leaves.
"""
