"""How close emu's schedulers are to Hadoop's: the fidelity suite.

`suite` lists the cases (`scenarios/fidelity/suite.toml`); `runner` replays
each with emu's scheduler and with Hadoop's own (`emu sls
--scheduler-impl hadoop`), same NM and AM models, same seed; `compare`
measures where and how much they differ; `report` writes docs/fidelity.md.
`python -m emu.fidelity` (`make fidelity`) runs it all.
"""
