"""What every run does before it starts, whichever entry point asked for it.

`emu sls`, `emu run`, the Python API (`emu.api`), `emu rm` and `emu cluster
up` all come here, so a configuration one of them refuses is refused by the
others, in the same words, before any output or process exists:

- `read_configuration`: a Hadoop configuration directory (sls-runner.xml,
  capacity-scheduler.xml, yarn-site.xml, later wins; a FairScheduler
  allocation file beside them), then the command line's overrides;
- `check_configuration`: the scheduler and whose code runs it
  (`RMSettings`), the properties emu's scheduler does not emulate refused or
  warned about (`emu.config.support`), and the scheduler built once off the
  run, so one that is missing or refuses its configuration is one line;
- `check_inputs`: node labels in the cluster or the jobs, and the queue
  refreshes a run will make, checked against the same table.

What a run replays (a scenario file, an SLS trace) is read by its own
module (`emu.scenario.native`, `emu.sls`) between the two checks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import trio

from emu.clock import virtual_clock
from emu.config import support
from emu.config.configuration import Configuration
from emu.config.hadoop_xml import ALLOCATION_FILE_KEY, fair_allocation_file, load_conf_dir
from emu.errors import InputError
from emu.rm.settings import SCHEDULER_CLASS, RMSettings
from emu.workload import JobSpec, NodeSpec

CONF_FILES = ("sls-runner.xml", "capacity-scheduler.xml", "yarn-site.xml")
"""The files of a configuration directory, in the order they are merged
(a later one wins), as SLS merges them."""


@dataclass
class HadoopConfiguration:
    """A configuration directory merged with the overrides, and what decided it."""

    conf: Configuration
    conf_dir: str | None
    """The directory read (the argument, else $HADOOP_CONF_DIR), or None."""
    explicit: set[str] = field(default_factory=set)
    """Names yarn-site.xml or an override set: those win over defaults a
    run derives from other files (e.g. SLS's NM heartbeat)."""


def read_configuration(
    conf_dir: str | None, overrides: dict[str, str], flag: str = "-D"
) -> HadoopConfiguration:
    """The merged configuration of `conf_dir` (None: $HADOOP_CONF_DIR, if set;
    "": none) with `overrides` over it, each override's source named by the
    command-line `flag` that gave it, so a refusal points at what to change."""
    if conf_dir is None:
        conf_dir = os.environ.get("HADOOP_CONF_DIR")
    conf_dir = conf_dir or None
    conf = Configuration()
    explicit: set[str] = set()
    if conf_dir:
        files = load_conf_dir(conf_dir)
        for name in CONF_FILES:
            if name in files:
                conf.update(files[name])
        yarn_site = files.get("yarn-site.xml")
        if yarn_site is not None:
            explicit.update(yarn_site)
        alloc = fair_allocation_file(conf_dir, yarn_site)
        if alloc is not None:
            conf.set(ALLOCATION_FILE_KEY, str(alloc.resolve()), str(alloc))
    for name, value in overrides.items():
        conf.set(name, value, flag)
        explicit.add(name)
    return HadoopConfiguration(conf, conf_dir, explicit)


@dataclass
class Checked:
    """A configuration that passed: its RM settings (the scheduler and whose
    code runs it) and the refused properties the run goes without
    (`--allow-unsupported`), for summary.json's `unsupported`."""

    rm_settings: RMSettings
    unsupported: list[support.Unsupported]

    @property
    def scheduler(self) -> str:
        return self.rm_settings.scheduler


def check_configuration(conf: Configuration) -> Checked:
    """Choose the scheduler, refuse (or warn about) what emu's does not
    emulate, and build it once; raises InputError on the first problem."""
    rm_settings = RMSettings.from_conf(conf)
    unsupported = support.check(conf, rm_settings.scheduler)
    build_scheduler(conf)
    return Checked(rm_settings, unsupported)


def build_scheduler(conf: Configuration) -> None:
    """Build the RM once, off the run, so a scheduler that is missing or
    refuses its configuration is reported before any output is made."""
    from emu.rm import recovery
    from emu.rm.actor import ResourceManager, RMAddresses

    built = conf
    if recovery.enabled(conf):
        # The state store is the run's: a trial RM must neither read nor bump it.
        built = Configuration()
        built.update(conf)
        built.set(recovery.RECOVERY_ENABLED, "false", "emu: the trial RM keeps no state")

    async def build() -> None:
        ResourceManager(built, RMAddresses.in_memory("preflight"))

    try:
        trio.run(build, clock=virtual_clock())
    except ValueError as e:
        if SCHEDULER_CLASS in conf:
            raise InputError(conf.sources[SCHEDULER_CLASS], SCHEDULER_CLASS, str(e)) from None
        raise InputError(
            "configuration",
            f"{SCHEDULER_CLASS} (not set: YARN's default is the CapacityScheduler)",
            f"{e}; set it in yarn-site.xml or with -D {SCHEDULER_CLASS}=fifo",
        ) from None


@dataclass(frozen=True)
class InputFields:
    """Where an input format keeps node labels and a job's label expression,
    so a refusal names the field the user wrote."""

    node_labels: str
    job_label: str


SLS_FIELDS = InputFields("labels", "job.label.expression")
SCENARIO_FIELDS = InputFields("labels", "label")


def check_inputs(
    checked: Checked,
    conf: Configuration,
    *,
    nodes_source: str,
    nodes: Sequence[NodeSpec],
    jobs_source: str,
    jobs: Sequence[JobSpec],
    fields: InputFields,
    refreshes: Iterable[tuple[str, Iterable[tuple[str, str]]]] = (),
) -> None:
    """Node labels on `nodes` or in `jobs`, and the properties of the queue
    `refreshes` ((where, properties) each) a run will make, checked as the
    configuration was; what the run goes without joins `checked.unsupported`."""
    labelled = [n.host for n in nodes if n.labels]
    if labelled:
        checked.unsupported += support.check_labels(
            conf, checked.scheduler, nodes_source, f"node {labelled[0]}", fields.node_labels
        )
    expressions = [j.job_id for j in jobs if j.params.get("label_expression")]
    if expressions:
        checked.unsupported += support.check_labels(
            conf, checked.scheduler, jobs_source, f"job {expressions[0]}", fields.job_label
        )
    checked.unsupported += support.check_changes(conf, checked.scheduler, refreshes)
