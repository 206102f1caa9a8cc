"""`emu sweep SPEC.toml`: a grid of replays, one process per point.

A spec (`emu.sweep.spec`) names traces, configurations (scheduler, conf dir,
`-D` properties, emu's port or Hadoop's scheduler), cluster sizes and seeds;
their product is the grid. Each point becomes a self-contained task
(`emu.sweep.points`): the `emu sls` or `emu run` arguments and the bytes of
every input file, so it runs the same in a local process or on a Dask worker
on another host (`emu.sweep.task`). The runner (`emu.sweep.runner`) runs the
points not finished yet, writes each one's outputs and figures
(`emu.sweep.figures`) under the sweep directory, and the table
(`emu.sweep.table`) gathers them into `results.csv` (and `results.parquet`
with pyarrow), ranks them by the spec's objective and answers its sizing
target. `emu report SWEEP_DIR` draws it (`emu.report.sweep`).
"""
