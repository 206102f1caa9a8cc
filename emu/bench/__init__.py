"""`make bench`: emu's speed on realistic load, as ratios beside their targets.

`workload` writes the benchmark inputs (Hadoop-standard files: SLS trace,
nodes file, configuration directories); `figures` runs the figures of
issue 12 (P1, P2, P4, P6 through the `emu sls` path; P3 through `emu
cluster up`, real NM processes over ZeroMQ) and prints each beside its
target.
"""
