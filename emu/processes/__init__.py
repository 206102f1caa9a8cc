"""Process entry points: emu spread over processes and hosts.

- `rm`      `emu rm`: the ResourceManager on YARN's ports, on the scaled
            wall clock it picks (epoch + rate), optionally with recovery
            and CURVE.
- `nm`      `emu nm`: one process hosting many NodeManagers (and the AMs
            that land on them).
- `replay`  `emu replay`: submits a trace or scenario to a running RM and
            writes the outputs `emu run` writes.
- `cluster` `emu cluster up|status`: a local RM and NM processes as
            subprocesses, started, watched and torn down together.
- `keys`    `emu keys generate`: CURVE keypairs (see `emu.security`).
- `common`  what they share: addresses, the blocking client used before a
            process's trio run starts (to learn the cluster clock), logging,
            signals.
- `commands` the argparse wiring `emu.cli` calls.

Every process other than the RM asks the RM for the cluster clock first
(`cluster_metrics` carries `epoch` and `rate`) and only then starts its trio
run on `ScaledWallClock(epoch, rate)`, since a trio run's clock is fixed
when it starts.
"""
