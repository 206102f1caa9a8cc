"""`make bench`: emu's speed on realistic load, as ratios beside their targets.

`workload` writes the benchmark inputs (Hadoop-standard files); `__main__`
runs the figures of issue 12 (P1, P2, P4, P6) through `emu sls`; `legacy`
keeps the earlier light FIFO scenarios for comparison.
"""
