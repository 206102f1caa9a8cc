"""emu: an emulator of Hadoop YARN's resource management.

The layout, one entry per module or package, from what every part shares
(messages, plain data, transports, clocks) to the actors and to what runs,
checks and watches them; docs/architecture.md explains how they fit.

Messages and plain data
- `msg/`         the messages (`types`): the four sent every heartbeat
                 (node heartbeats, allocate, and their replies) as classes
                 with fields, every other one as its catalogue map; the
                 catalogue of who sends what with which fields (`catalogue`),
                 msgpack encoding and validation (`codec`). Imports nothing
                 else from emu.
- `resources`    Resource (memory, vcores, extra types) and its arithmetic.
- `workload`     Workload, JobSpec, TaskSpec: what a replay submits.
- `errors`       InputError: a bad input as one line naming file and place;
                 SchedulerFailed: a scheduler that threw (Hadoop's, a plugin).
- `config/`      Hadoop configuration by property name, read from its XML;
                 `support` decides what emu emulates, refuses or accepts without effect.

Transports and clocks
- `transport/`   how messages travel: `mem://` hands objects over in one
                 process, ZeroMQ `tcp://`/`ipc://` encodes and validates at
                 its boundary; each a `Backend` found by scheme
                 (`base.BACKENDS`) with one `Options` (CURVE keys, monitor,
                 size limit). Actors see only `serve`/`connect`.
- `clock`        the virtual and scaled wall clocks, trio's scheduler made
                 deterministic, plain timers beside trio's (docs/clock.md).
- `alarm`        one task's wait until a time or a wake, on those timers.
- `trio_time`    trio's current time in one call.
- `timeouts`     how long an actor waits for a reply before asking again.
- `security`     CURVE key files and the ZAP handler.

The actors
- `rm/`          the ResourceManager:
  - `actor`            the RM process: the only RM module that touches
                       transports; runs the services and monitors.
  - `services/`        requests -> events -> replies, one class per YARN
                       service (`resource_tracker`, `application_master`,
                       `client_rm`, `admin`; `service`: what they share);
                       `router` sends each request to its service.
  - `context`          RMContext: the registry the services, entities and
                       scheduler share; `entity_context` the part of it the
                       entities see (a Protocol).
  - `enums`            the entities' states and events (a leaf module).
  - `app`, `attempt`, `container`, `node`   the entities' transition tables
                       and the lifecycle steps their hooks take.
  - `statemachine`, `dispatcher`   declarative state tables, one ordered
                       event queue.
  - `settings`         RMSettings: the RM's Hadoop properties, including
                       `emu.scheduler.shortcuts`.
  - `monitors`         NM, AM and container-allocation expiry.
  - `node_labels`      the cluster's node labels (partitions), which node
                       has which, and Hadoop's refusals of label changes.
  - `retention`        the finished apps the RM keeps, as YARN does.
  - `recovery`         the RM's state store (work-preserving restart).
  - `stall`            telling a run that can make no progress from a slow one.
  - `diagnostics`      YARN's own messages for refused requests and apps,
                       and why an app waits on a label its queue has no
                       capacity in.
  - `scheduler/`       `registry` (scheduler and Fair policy names ->
                       implementations), `events`, the common layer as
                       Hadoop splits it (`abstract_scheduler`,
                       `scheduler_node`, `scheduler_app`,
                       `app_scheduling_info`, `queue_metrics`, `locality`),
                       `activities` (why apps wait),
                       `javahash` (Java's HashMap order where Hadoop walks
                       one), and the schedulers: `fifo`; `capacity/`
                       (`scheduler`, the coordinator; `queues`,
                       `allocator`, `config`, `placement`,
                       `max_running_apps`, `queue_manager` (auto-created
                       queues' lifecycle; `auto_queues` their settings),
                       `node_labels`, `label_waits`, `queue_reports`,
                       `preemption` with `preemption_snapshot` and
                       `intra_preemption`, `resource_math`); `fair/`
                       (`scheduler`, `fs_queue`, `fs_parent_queue`,
                       `fs_leaf_queue`, `queue_manager`, `app`, `policies`,
                       `shares`, `orderings` (its speed indexes: kept orders
                       and quiet-node state), `allocation_file`, `settings`,
                       `placement`, `preemption`, `max_running`, `arith`);
                       `hadoop`: Hadoop's own scheduler class deciding.
- `nm`           NodeManager hosts: many nodes per process, one timer heap.
- `am/`          ApplicationMasters: `engine` (one AM), `policies`
                 (mapreduce, stream, generic), `driver` (every in-process
                 AM stepped from one timer heap).
- `client`, `replay`   the client actor: submits a workload's timeline.

Inputs, runs and outputs
- `scenario/`    readers: emu's TOML scenarios (`native`), SLS, Rumen and
                 SYNTH traces, topology files, queue checks, Java int limits,
                 `rumen2sls`.
- `simulation`   a whole cluster in one process on the virtual clock, with
                 its faults and what-if changes (`scenario.native.Change`).
- `preflight`    what every run does first (`emu sls`, `emu run`, the API,
                 `emu rm`, `emu cluster up`): the configuration directory
                 read, the scheduler chosen and built once, `support`'s
                 refusals and warnings, node labels and refreshes checked.
- `scenario_run` one replay of an emu scenario file (`emu run`, the API).
- `api`          emu from Python: `replay`, `run_scenario`, results as data.
- `plugins`      loading scheduler and Fair policy plugins (docs/plugins.md).
- `sls`          `emu sls`: SLS-compatible replay (slsrun.sh's options,
                 Hadoop config dirs, SLS's outputs and invariants).
- `processes/`   the multi-process commands: `emu rm`, `emu nm`, `emu
                 replay`, `emu cluster`, `emu keys`, `emu admin`.
- `metrics/`     event log, summaries and the queue-share timeline,
                 SLS-compatible outputs, the progress line, Hadoop's metric
                 invariants and the RM's own (`cluster_invariants`), fault
                 reports, why jobs failed, the utilization integral.
- `outdir`       `--output-dir`, created or refused in one line.
- `watch`        what `--progress`/`--web-port` start around a replay.
- `web/`         the YARN REST API and live pages (hypercorn + starlette in
                 a thread of their own), fed by `live` snapshots of `view`.
- `report/`      `emu report`: run outputs -> one self-contained HTML file.
- `sweep/`       `emu sweep`: a grid of replays, locally or on Dask.
- `hadoop/`      Hadoop's jars (`classpath`: every Maven classpath emu
                 uses, in one cache), the JVM through JPype (`bridge`), the
                 Java driver and the contract with it (`contract`, mirrored
                 by `java/.../SchedulerBackend.java`).
- `fidelity/`    `make fidelity`: emu's schedulers against Hadoop's and SLS,
                 decision by decision; writes docs/fidelity.md. The Java of
                 its witnesses beside it: `sls/` (the SLS launcher),
                 `java/` (the REST probe).
- `bench/`       `make bench`: the benchmark inputs (`workload`), the
                 figures beside their targets (`figures`), the machine's
                 speed (`calibrate`), memory (`memory`), quiet heartbeats
                 (`quiet`).
- `soak`         `make soak`: hours at 1,000 nodes with faults.
- `testing/`     the in-memory cluster and scheduler harnesses the tests
                 use, public for plugin and scenario tests.
- `docs`         `make docs`: docs generated from the code.
- `cli`          the `emu` command.
- `native`, `compile`   the mypyc-compiled form of the hot modules
                 (`make compile`); `import emu` falls back to the sources
                 when the build is missing or stale.
"""

__version__ = "0.1.0"

# Load the compiled hot modules, or their sources when the build is missing
# or stale (emu/native.py says why).
from emu import native as _native

_native.activate()
