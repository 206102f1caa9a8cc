"""emu: an emulator of Hadoop YARN's resource management.

General layout (each line is one boundary worth keeping):

- `protocol`   the message catalogue and codec. Imports nothing from emu;
               every actor depends on it.
- `transport/` how encoded messages travel: `mem://` (one process, virtual
               clock) and ZeroMQ `tcp://`/`ipc://`, each a `Backend` found
               by scheme in `base.BACKENDS`, configured by one `Options`
               (CURVE keys, monitor, size limit). Actors see only
               `serve`/`connect`.
- `clock`      virtual and scaled-wall clocks; everything reads trio's clock.
- `resources`, `workload`, `errors`, `config/`  plain data shared by all.
- `rm/`        the ResourceManager: `actor` (the only RM module that touches
               transports), `services/` (requests -> events -> replies, one
               class per YARN service: `resource_tracker`,
               `application_master`, `client_rm`, `admin`), `context` (the
               registry everything shares), `dispatcher`, `statemachine`
               and the four entity tables (`app`, `attempt`, `container`,
               `node`, each with StrEnums of its states and events and the
               lifecycle steps its hooks take), `monitors`, `retention` (the
               finished apps it keeps), and `scheduler/`
               (`events`: the SchedulerEvent enum;
               `scheduler_node`, `app_scheduling_info`, `scheduler_app`,
               `queue_metrics`, `locality` and `abstract_scheduler`, as
               Hadoop splits them; `abstract_scheduler` charges and frees
               every container through one hook pair) + fifo/capacity
               (its `allocator` on its own state)/fair; `shortcuts`
               is the one switch for output-preserving hot-path shortcuts;
               `activities` records why apps wait). Schedulers see only RM
               entities.
- `nm`         NodeManager actors, many per process, one timer heap.
- `am/`        ApplicationMaster engine and per-type policies.
- `client`, `replay`   the client actor: submits a workload's timeline.
- `scenario/`  readers for emu scenarios and SLS/Rumen/SYNTH traces.
- `simulation` a whole cluster in one process on the virtual clock.
- `sls`        `emu sls`: SLS-compatible replay (slsrun.sh's options,
               Hadoop config dirs, SLS's outputs and invariants).
- `processes/` the multi-process commands: `emu rm`, `emu nm`, `emu replay`,
               `emu cluster`, `emu keys`, `emu admin`; `rm/recovery` is the
               RM's state store; `security` the CURVE keys and ZAP handler.
- `metrics/`   event log, summaries (with the timeline of queue shares and
               fairness), SLS-compatible outputs, the progress line,
               invariants (Hadoop's metric files; the RM's own state), fault
               reports, the utilization integral (`utilization`).
- `web/`       watching a run: the read-only cluster view (`view`), the YARN
               REST API and live pages on hypercorn+starlette in a thread of
               their own (`api`, `pages`, `server`), fed by `live`.
- `report/`    `emu report`: run outputs -> one self-contained HTML file.
- `watch`      what `--progress`/`--web-port` start around a replay.
- `bench/`     `make bench`: a seeded generator of the benchmark inputs
               (`workload`), the figures beside their targets (`figures`)
               where a run's memory goes (`memory`) and what a quiet
               node heartbeat costs (`quiet`).
- `soak`       `make soak`: hours at 1,000 nodes with faults, memory sampled.
- `cli`        the `emu` command.
- `native`     the mypyc-compiled form of the hot modules, built by
               `make install`; `import emu` falls back to the sources when
               the build is missing or stale.
"""

__version__ = "0.1.0"

# Load the compiled hot modules, or their sources when the build is missing
# or stale (emu/native.py says why).
from emu import native as _native

_native.activate()
