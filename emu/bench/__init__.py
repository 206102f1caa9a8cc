"""`make bench`: emu's speed on realistic load, as ratios beside their targets.

`workload` writes the benchmark inputs (Hadoop-standard files: SLS trace,
nodes file, configuration directories); `figures` runs the figures
(P1, P2, P4, P6 and H1 through the `emu sls` path; P3 through `emu
cluster up`, real NM processes over ZeroMQ) and prints each beside its
target.
"""
