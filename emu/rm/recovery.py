"""ResourceManager restart with recovery, as YARN's, work-preserving.

Two parts:

- `StateStore`: a directory of msgpack files (YARN's FileSystemRMStateStore,
  one file per application instead of a znode tree). `rm.msgpack` holds the
  cluster's clock (epoch, rate), cluster timestamp, the highest application
  sequence number handed out (reserved in blocks) and the restart count;
  `apps/<app_id>.msgpack` holds one application and its attempts, rewritten
  whenever either reaches a state worth remembering;
  `apps/<app_id>.context.msgpack` holds the submission context (the AM's task
  plan), written once. Every write goes to a temporary file renamed over
  the old one, so a crash leaves the old or the new record, never half of
  one; `emu.state-store.fsync` adds an fsync per write.

- `RMRecovery`: saving and restoring. Saves happen when an application
  enters NEW_SAVING (the submission), RUNNING, FINAL_SAVING (its outcome
  decided) or a final state, and when an attempt starts, gets its AM
  container, or ends -- YARN's store events. On start, `recover()` rebuilds
  every application: finished ones as they ended, running ones through the
  App and AppAttempt RECOVER transitions (see docs/state-machines.md). An
  attempt whose AM container was allocated comes back LAUNCHED, waiting for
  its AM to register again (its AM liveness clock starts anew); one without
  asks for its AM container again.

  The rest arrives from the NMs and AMs (the RM's services call these
  additions on their one path for each message, only when recovery is on): NMs, told RESYNC
  because the new RM does not know them, register again listing the
  containers they still run; containers of recovered attempts are rebuilt
  (`Scheduler.recover_container`), the rest are cleaned up. An AM whose
  allocate reaches the new RM is told RESYNC; it registers again and
  re-sends its whole ask table. Completions that happened while the RM was
  down reach the AMs. No application is resubmitted and no running
  container is stopped.

Properties: `yarn.resourcemanager.recovery.enabled`,
`yarn.resourcemanager.work-preserving-recovery.enabled` (default true; the
NMs keep their containers across the restart only then), and the store's
directory `yarn.resourcemanager.fs.state-store.uri` (a `file://` URI or a
path; `yarn.resourcemanager.leveldb-state-store.path` is accepted as well).
"""

from __future__ import annotations

import getpass
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgpack
import structlog

from emu.config.configuration import Configuration
from emu.errors import InputError
from emu.msg import types as P
from emu.msg.types import Allocate, AllocateReply
from emu.resources import Resource
from emu.rm import app as app_sm
from emu.rm import attempt as attempt_sm
from emu.rm import node as node_sm
from emu.rm.app import RMApp
from emu.rm.attempt import RMAppAttempt
from emu.rm.container import RMContainer

if TYPE_CHECKING:
    from collections.abc import Callable

    from emu.rm.context import RMContext

log = structlog.get_logger("emu.rm.recovery")

RECOVERY_ENABLED = "yarn.resourcemanager.recovery.enabled"
WORK_PRESERVING = "yarn.resourcemanager.work-preserving-recovery.enabled"
STORE_URI = "yarn.resourcemanager.fs.state-store.uri"
LEVELDB_PATH = "yarn.resourcemanager.leveldb-state-store.path"
FSYNC = "emu.state-store.fsync"

APP_SEQ_BLOCK = 100
"""Application numbers are reserved in the store this many at a time, so an
id handed out just before a crash is never handed out again."""
CONTAINER_EPOCH = 1_000_000
"""After the n-th restart, recovered attempts number new containers from
n * CONTAINER_EPOCH (YARN puts an epoch in container ids for the same
reason): ids handed out before the crash and not yet reported by an NM
cannot be reused."""

_APP_SAVES = frozenset(
    {
        app_sm.NEW_SAVING,
        app_sm.RUNNING,
        app_sm.FINAL_SAVING,
        app_sm.FINISHING,
        app_sm.FINISHED,
        app_sm.FAILED,
        app_sm.KILLED,
    }
)
_ATTEMPT_SAVES = frozenset(
    {
        attempt_sm.SUBMITTED,
        attempt_sm.ALLOCATED,
        attempt_sm.FINISHING,
        attempt_sm.FINISHED,
        attempt_sm.FAILED,
        attempt_sm.KILLED,
    }
)


def enabled(conf: Configuration) -> bool:
    return conf.get_bool(RECOVERY_ENABLED, False)


def store_dir(conf: Configuration) -> Path:
    """The state store's directory, from the configuration (YARN's defaults)."""
    uri = conf.get(STORE_URI) or conf.get(LEVELDB_PATH)
    if not uri:
        tmp = conf.get("hadoop.tmp.dir") or f"/tmp/hadoop-{getpass.getuser()}"
        return Path(tmp) / "yarn" / "system" / "rmstore"
    if uri.startswith("file://"):
        return Path(uri[len("file://") :])
    if "://" in uri:
        raise InputError(
            conf.sources.get(STORE_URI, "configuration"),
            STORE_URI,
            f"only local state stores are supported (file:// or a path), got {uri!r}",
        )
    return Path(uri)


class StateStore:
    """The files; see the module docstring."""

    def __init__(self, directory: str | os.PathLike[str], fsync: bool = False) -> None:
        self.dir = Path(directory)
        self.apps_dir = self.dir / "apps"
        self.fsync = fsync
        self.writes = 0
        try:
            self.apps_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(str(self.dir), None, f"cannot create the state store: {e}") from None

    @classmethod
    def from_conf(cls, conf: Configuration) -> StateStore:
        return cls(store_dir(conf), conf.get_bool(FSYNC, False))

    def _write(self, path: Path, data: Any) -> None:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(msgpack.packb(data, use_bin_type=True))
                if self.fsync:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.writes += 1

    @staticmethod
    def _read(path: Path) -> Any:
        try:
            return msgpack.unpackb(path.read_bytes(), raw=False, strict_map_key=False)
        except (OSError, ValueError, msgpack.UnpackException) as e:
            raise InputError(str(path), None, f"unreadable state store record: {e}") from None

    def load_meta(self) -> dict[str, Any] | None:
        path = self.dir / "rm.msgpack"
        return self._read(path) if path.is_file() else None

    def save_meta(self, meta: dict[str, Any]) -> None:
        self._write(self.dir / "rm.msgpack", meta)

    def save_context(self, app_id: str, context: dict[str, Any]) -> None:
        self._write(self.apps_dir / f"{app_id}.context.msgpack", context)

    def save_app(self, record: dict[str, Any]) -> None:
        self._write(self.apps_dir / f"{record['app_id']}.msgpack", record)

    def remove_app(self, app_id: str) -> None:
        """Forget a completed app (yarn.resourcemanager.state-store.max-completed-applications)."""
        (self.apps_dir / f"{app_id}.msgpack").unlink(missing_ok=True)
        (self.apps_dir / f"{app_id}.context.msgpack").unlink(missing_ok=True)

    def load_apps(self) -> list[dict[str, Any]]:
        """Every application record, with its context, in id order."""
        records = []
        for path in sorted(self.apps_dir.glob("application_*.msgpack")):
            if path.name.endswith(".context.msgpack"):
                continue
            record = self._read(path)
            ctx_path = self.apps_dir / f"{record['app_id']}.context.msgpack"
            record["context"] = self._read(ctx_path) if ctx_path.is_file() else {}
            records.append(record)
        records.sort(key=lambda r: _app_seq(r["app_id"]))
        return records


def _app_seq(app_id: str) -> int:
    return int(app_id.rsplit("_", 1)[1])


def attempt_of_container(container_id: str) -> str:
    """container_<ts>_<app>_<attempt>_<seq> -> appattempt_<ts>_<app>_<attempt:06d>."""
    parts = container_id.split("_")
    if len(parts) != 5 or parts[0] != "container":
        return ""
    try:
        return f"appattempt_{parts[1]}_{parts[2]}_{int(parts[3]):06d}"
    except ValueError:
        return ""


def _app_record(app: RMApp, attempts: list[RMAppAttempt]) -> dict[str, Any]:
    return {
        "app_id": app.app_id,
        "name": app.name,
        "queue": app.queue,
        "user": app.user,
        "priority": app.priority,
        "am_resource": app.am_resource.to_wire(),
        "am_type": app.am_type,
        "unmanaged": app.unmanaged,
        "max_attempts": app.max_attempts,
        "state": app.state,
        "submit_ms": app.submit_ms,
        "started_ms": app.started_ms,
        "finished_ms": app.finished_ms,
        "final_status": app.final_status,
        "final_target": app.final_target,
        "diagnostics": app.diagnostics,
        "attempts": [
            {
                "attempt_id": a.attempt_id,
                "number": a.number,
                "state": a.state,
                "am_container_id": a.am_container_id,
                "am_host": a.am_host,
                "started_ms": a.started_ms,
                "launched_ms": a.launched_ms,
                "registered_ms": a.registered_ms,
                "finished_ms": a.finished_ms,
                "final_status": a.final_status,
                "diagnostics": a.diagnostics,
            }
            for a in attempts
        ],
    }


class RMRecovery:
    """Saves the RM's applications as they change and restores them on start."""

    def __init__(
        self, ctx: RMContext, store: StateStore, meta: dict[str, Any], work_preserving: bool
    ) -> None:
        self.ctx = ctx
        self.store = store
        self.meta = meta
        self.work_preserving = work_preserving
        self.restarts = int(meta.get("restarts", 0))
        self.resumable: dict[str, str] = {}
        """app id -> its last attempt, to be resumed instead of replaced."""
        self.live_recovered: set[str] = set()
        """Recovered attempts whose AM container may still be running: NM
        reports of their containers are rebuilt, not cleaned up."""
        self.recovered_apps = 0
        self.recovered_containers = 0
        self.recovered_completions = 0

    @classmethod
    def from_conf(cls, ctx: RMContext, conf: Configuration, meta: dict[str, Any]) -> RMRecovery:
        return cls(ctx, StateStore.from_conf(conf), meta, conf.get_bool(WORK_PRESERVING, True))

    # --- saving (RMContext calls these) ------------------------------------------------
    def state_changed(self, kind: str, entity: Any) -> None:
        """An app or attempt changed state: save what recovery needs."""
        if kind == "app":
            if entity.state in _APP_SAVES:
                if entity.state == app_sm.NEW_SAVING:
                    self.store.save_context(entity.app_id, entity.context)
                self._save(entity)
        elif kind == "attempt" and entity.state in _ATTEMPT_SAVES:
            if entity.state in attempt_sm.FINAL:
                self.live_recovered.discard(entity.attempt_id)
            app = self.ctx.apps.get(entity.app_id)
            if app is not None:
                self._save(app)

    def _save(self, app: RMApp) -> None:
        attempts = [self.ctx.attempts[a] for a in app.attempts if a in self.ctx.attempts]
        self.store.save_app(_app_record(app, attempts))

    def app_id_issued(self, seq: int) -> None:
        """Reserve application numbers ahead of those handed out."""
        if seq > self.meta.get("app_seq_reserved", 0):
            self.meta["app_seq_reserved"] = seq + APP_SEQ_BLOCK
            self.store.save_meta(self.meta)

    def resume_attempt(self, app: RMApp) -> bool:
        """Instead of a new attempt, resume the recovered one (True if so)."""
        attempt_id = self.resumable.pop(app.app_id, None)
        if attempt_id is None:
            return False
        self.ctx.dispatch("attempt", attempt_sm.AttemptEvent.RECOVER, attempt_id)
        return True

    # --- restoring -----------------------------------------------------------------------
    def recover(self) -> None:
        """Rebuild every stored application; called once, before serving."""
        ctx = self.ctx
        now = ctx.now_ms()
        max_seq = 0
        records = self.store.load_apps()
        for rec in records:
            max_seq = max(max_seq, _app_seq(rec["app_id"]))
            app = RMApp(
                rec["app_id"],
                rec["name"],
                rec["queue"],
                rec["user"],
                rec["priority"],
                Resource.from_wire(rec["am_resource"]),
                rec["am_type"],
                rec["context"],
                rec["max_attempts"],
                rec["submit_ms"],
            )
            app.unmanaged = bool(rec.get("unmanaged", False))
            app.started_ms = rec["started_ms"]
            app.finished_ms = rec["finished_ms"]
            app.final_status = rec["final_status"]
            app.final_target = rec["final_target"]
            app.diagnostics = rec["diagnostics"]
            for arec in rec["attempts"]:
                a = RMAppAttempt(arec["attempt_id"], app.app_id, arec["number"], arec["started_ms"])
                for name in (
                    "am_container_id",
                    "am_host",
                    "launched_ms",
                    "registered_ms",
                    "finished_ms",
                    "final_status",
                    "diagnostics",
                ):
                    setattr(a, name, arec[name])
                if arec["state"] in attempt_sm.FINAL:
                    a.state = attempt_sm.AttemptState(arec["state"])
                ctx.attempts[a.attempt_id] = a
                app.attempts.append(a.attempt_id)
            ctx.apps[app.app_id] = app
            final = _final_state(rec)
            if final is not None:
                self._restore_final(app, final, now)
                continue
            last = ctx.attempts[app.attempts[-1]] if app.attempts else None
            if last is not None and last.state not in attempt_sm.FINAL:
                self.resumable[app.app_id] = last.attempt_id
                if last.am_container_id:
                    self.live_recovered.add(last.attempt_id)
            self.recovered_apps += 1
            ctx.dispatch("app", app_sm.AppEvent.RECOVER, app.app_id)
        ctx.dispatcher.drain()
        ctx.app_seq = max(ctx.app_seq, max_seq, self.meta.get("app_seq_reserved", 0))
        base = self.restarts * CONTAINER_EPOCH
        for attempt_id in sorted(self.live_recovered):
            sapp = ctx.scheduler.apps.get(attempt_id)
            if sapp is not None:
                sapp.container_seq = max(sapp.container_seq, base)
        log.info(
            "recovered from the state store",
            store=str(self.store.dir),
            apps=len(records),
            running=self.recovered_apps,
            waiting_for_am=len(self.live_recovered),
            restarts=self.restarts,
        )

    def _restore_final(self, app: RMApp, final: str, now: int) -> None:
        """An app whose outcome was saved comes back as it ended."""
        ctx = self.ctx
        app.state = app_sm.AppState(final)
        if app.finished_ms < 0:
            app.finished_ms = now
        for attempt_id in app.attempts:
            a = ctx.attempts[attempt_id]
            if a.state not in attempt_sm.FINAL:
                a.state = attempt_sm.FINISHED if final == app_sm.FINISHED else attempt_sm.KILLED
                a.finished_ms = app.finished_ms
        ctx.final_apps[final] += 1
        ctx.completed_apps.recovered(app.app_id)
        self._save(app)

    # --- the services' recovery additions ----------------------------------------------------
    # The RM's services call these on their one path for each message.

    def allocate_resync(self, req: Allocate) -> AllocateReply | None:
        """RESYNC for an allocate from the AM of a recovered attempt that has
        not registered again since the restart (YARN's
        ApplicationMasterNotRegisteredException: the AM registers again,
        then re-sends its asks); None for any other."""
        if req.attempt_id not in self.live_recovered:
            return None
        a = self.ctx.attempts.get(req.attempt_id)
        if a is None or a.state != attempt_sm.LAUNCHED:
            return None
        return AllocateReply(
            req.request_id, 0, [], [], Resource(), len(self.ctx.scheduler.nodes), None, P.RESYNC
        )

    def register_node(
        self, handle: Callable[[dict[str, Any]], dict[str, Any]], msg: dict[str, Any]
    ) -> dict[str, Any]:
        """`register_node` (`handle`) with the work-preserving additions: the
        reply tells the node whether to keep its containers, and what it
        lists is taken in."""
        ctx = self.ctx
        node_id = msg["node_id"]
        fresh = node_id not in ctx.nodes and node_id not in ctx.inactive_nodes
        reply = handle(msg)
        if reply.get("type") == "error":
            return reply
        reply["work_preserving"] = self.work_preserving
        if reply["action"] == P.NORMAL and msg["containers"]:
            self._node_containers(node_id, msg["containers"], fresh)
            ctx.dispatcher.drain()
        return reply

    def _node_containers(self, node_id: str, statuses: list[dict[str, Any]], fresh: bool) -> None:
        """A registering node's container list: rebuild what belongs to
        recovered attempts (only a node this RM has not seen before can hold
        such), clean up the rest."""
        ctx = self.ctx
        for st in statuses:
            cid = st["container_id"]
            if st["state"] == "COMPLETE":
                if fresh:
                    self._recovered_completion(node_id, st)
                continue
            c = ctx.containers.get(cid)
            if c is not None and c.node_id == node_id:
                continue
            if fresh and c is None and self._recover_container(node_id, st):
                continue
            ctx.dispatch("node", node_sm.NodeEvent.CLEANUP_CONTAINER, node_id, cid)

    def heartbeat_statuses(self, node_id: str, statuses: list[dict[str, Any]]) -> None:
        """Containers of recovered attempts the RM has not heard of yet, in
        a heartbeat the node's RMNode is in step with: started by their AM
        from an allocation made before the restart, or finished while it
        was down."""
        ctx = self.ctx
        for st in statuses:
            cid = st["container_id"]
            if cid in ctx.containers:
                continue
            if attempt_of_container(cid) not in self.live_recovered:
                continue
            if st["state"] == "COMPLETE":
                self._recovered_completion(node_id, st)
            else:
                self._recover_container(node_id, st)
        ctx.dispatcher.drain()

    def _recover_container(self, node_id: str, st: dict[str, Any]) -> bool:
        ctx = self.ctx
        cid = st["container_id"]
        attempt_id = attempt_of_container(cid)
        if attempt_id not in self.live_recovered or not isinstance(st.get("resource"), dict):
            return False
        a = ctx.attempts[attempt_id]
        priority = st.get("priority")
        c = ctx.scheduler.recover_container(
            attempt_id,
            cid,
            node_id,
            Resource.from_wire(st["resource"]),
            priority if type(priority) is int else 0,
            cid == a.am_container_id,
        )
        if c is None:
            return False
        self.recovered_containers += 1
        return True

    def _recovered_completion(self, node_id: str, st: dict[str, Any]) -> None:
        """A container of a recovered attempt ended while the RM was down:
        its AM must hear of it (an AM container's end ends the attempt)."""
        ctx = self.ctx
        cid = st["container_id"]
        attempt_id = attempt_of_container(cid)
        a = ctx.attempts.get(attempt_id)
        if a is None or attempt_id not in self.live_recovered:
            return
        self.recovered_completions += 1
        status = {
            "container_id": cid,
            "state": "COMPLETE",
            "exit_status": st["exit_status"],
            "diagnostics": st.get("diagnostics") or "",
        }
        if cid != a.am_container_id:
            a.just_finished.append(status)
            return
        c = RMContainer(
            cid, attempt_id, a.app_id, node_id, Resource(), 0, "OFF_SWITCH", True, ctx.now_ms()
        )
        c.exit_status, c.diagnostics = status["exit_status"], status["diagnostics"]
        ctx.dispatch("attempt", attempt_sm.AttemptEvent.CONTAINER_FINISHED, attempt_id, c)

    def metrics(self) -> dict[str, Any]:
        return {
            "store": str(self.store.dir),
            "store_writes": self.store.writes,
            "restarts": self.restarts,
            "recovered_apps": self.recovered_apps,
            "recovered_containers": self.recovered_containers,
            "recovered_completions": self.recovered_completions,
            "waiting_for_am": len(self.live_recovered),
        }


def _final_state(rec: dict[str, Any]) -> str | None:
    """The state an app comes back in if its outcome was saved, else None."""
    state: str = rec["state"]
    if state in app_sm.FINAL:
        return state
    target = rec.get("final_target") or ""
    if state in (app_sm.FINAL_SAVING, app_sm.FINISHING) and target:
        return app_sm.FINISHED if target == app_sm.FINISHING else target
    return None


def open_meta(
    conf: Configuration, epoch: float, rate: float, cluster_timestamp: int
) -> dict[str, Any]:
    """The store's RM record at start: the saved clock and identity if there
    is one (a restart keeps the cluster's epoch, rate and timestamp, so
    other processes' clocks and ids stay valid), else the given ones. The
    restart count is bumped and the record saved."""
    store = StateStore.from_conf(conf)
    meta = store.load_meta()
    if meta is None:
        meta = {
            "epoch": epoch,
            "rate": rate,
            "cluster_timestamp": cluster_timestamp,
            "app_seq_reserved": 0,
            "restarts": 0,
        }
    else:
        meta["restarts"] = int(meta.get("restarts", 0)) + 1
    store.save_meta(meta)
    return meta
