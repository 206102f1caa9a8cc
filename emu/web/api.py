"""The YARN ResourceManager REST API (`/ws/v1/cluster/...`) as a Starlette app.

Paths, query parameters, field names and JSON shapes follow Hadoop's
`RMWebServices` and its DAOs (see `emu.web.view`); errors use YARN's
`{"RemoteException": {"exception", "message", "javaClassName"}}` shape with
404 for unknown ids and 400 for bad parameters. Reads are served from the
latest snapshot the run published (`LiveView.latest`); writes go into the
run's loop through `LiveView.request` and so through the RM's client
protocol. The live pages (`emu.web.pages`) are mounted on the same app.
"""

from __future__ import annotations

import json
from typing import Any

import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from emu.rm import app as app_sm
from emu.rm.enums import AppState
from emu.web.live import LiveView, RunEnded
from emu.web.view import Snapshot, resource_info

APP_STATES = tuple(AppState)
"""Every RMAppState name, in YARN's order (the REST filters' valid values)."""

WEBAPP = "org.apache.hadoop.yarn.webapp."
DEFAULT_USER = "dr.who"
"""YARN's hadoop.http.staticuser.user: who a request without user.name is."""
REST_TASK_DURATION_MS = 60_000
"""How long the one task of an app submitted over REST runs, unless its
am-container-spec environment sets EMU_TASK_DURATION_MS."""


class YarnError(Exception):
    """An error answered in YARN's RemoteException shape."""

    def __init__(self, status: int, exception: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.exception = exception
        self.message = message


def _remote_exception(status: int, exception: str, message: str) -> JSONResponse:
    return JSONResponse(
        {
            "RemoteException": {
                "exception": exception,
                "message": message,
                "javaClassName": WEBAPP + exception,
            }
        },
        status_code=status,
    )


def not_found(message: str) -> YarnError:
    return YarnError(404, "NotFoundException", f"java.lang.Exception: {message}")


def bad_request(message: str) -> YarnError:
    return YarnError(400, "BadRequestException", f"java.lang.Exception: {message}")


def build_api(live: LiveView) -> list[Route]:
    """The `/ws/v1/cluster` routes over one LiveView."""

    def snap() -> Snapshot:
        if live.latest is None:
            raise YarnError(503, "ServiceUnavailableException", "the run has not started yet")
        return live.latest

    def app_of(request: Request) -> dict[str, Any]:
        app_id = request.path_params["app_id"]
        app = snap().app(app_id)
        if app is None:
            raise not_found(f"app with id: {app_id} not found")
        return app

    async def write(mtype: str, **fields: Any) -> dict[str, Any]:
        try:
            reply = await anyio.to_thread.run_sync(lambda: live.request(mtype, **fields))
        except RunEnded as e:
            raise YarnError(503, "ServiceUnavailableException", str(e)) from None
        if reply["type"] == "error":
            if reply["code"] == "not_found":
                raise not_found(reply["message"])
            raise bad_request(reply["message"])
        return reply

    async def info(request: Request) -> JSONResponse:
        return JSONResponse({"clusterInfo": snap().cluster_info})

    async def metrics(request: Request) -> JSONResponse:
        return JSONResponse({"clusterMetrics": snap().metrics})

    async def scheduler(request: Request) -> JSONResponse:
        return JSONResponse({"scheduler": {"schedulerInfo": snap().scheduler}})

    async def nodes(request: Request) -> JSONResponse:
        states = _csv_upper(request.query_params.get("states"))
        found = [n for n in snap().nodes if not states or n["state"] in states]
        return JSONResponse({"nodes": {"node": found}})

    async def node(request: Request) -> JSONResponse:
        node_id = request.path_params["node_id"]
        n = snap().node(node_id)
        if n is None:
            raise not_found(f"nodeId, {node_id}, is not found")
        return JSONResponse({"node": n})

    async def apps(request: Request) -> JSONResponse:
        return JSONResponse({"apps": {"app": filter_apps(snap().apps, request.query_params)}})

    async def app(request: Request) -> JSONResponse:
        return JSONResponse({"app": app_of(request)})

    async def attempts(request: Request) -> JSONResponse:
        a = app_of(request)
        return JSONResponse({"appAttempts": {"appAttempt": snap().attempts.get(a["id"], [])}})

    def attempt_of(request: Request) -> dict[str, Any]:
        a = app_of(request)
        wanted = request.path_params["attempt_id"]
        for att in snap().attempts.get(a["id"], []):
            if wanted in (att["appAttemptId"], str(att["id"])):
                return att
        raise not_found(f"appAttempt with id: {wanted} not found")

    async def attempt(request: Request) -> JSONResponse:
        return JSONResponse({"appAttempt": attempt_of(request)})

    async def containers(request: Request) -> JSONResponse:
        att = attempt_of(request)
        found = snap().containers.get(att["appAttemptId"], [])
        return JSONResponse({"containers": {"container": found}})

    async def container(request: Request) -> JSONResponse:
        att = attempt_of(request)
        cid = request.path_params["container_id"]
        for c in snap().containers.get(att["appAttemptId"], []):
            if c["containerId"] == cid:
                return JSONResponse({"container": c})
        raise not_found(f"container with id: {cid} not found")

    async def state(request: Request) -> JSONResponse:
        a = app_of(request)
        if request.method == "GET":
            return JSONResponse({"state": a["state"]})
        target = (await _json_body(request)).get("state")
        if target != app_sm.KILLED:
            raise bad_request("Only 'KILLED' is allowed as a target state.")
        if a["state"] in app_sm.FINAL:
            return JSONResponse({"state": a["state"]})
        await write("kill_application", app_id=a["id"])
        now = snap().app(a["id"]) or a
        done = now["state"] == app_sm.KILLED
        return JSONResponse({"state": now["state"]}, status_code=200 if done else 202)

    async def queue(request: Request) -> JSONResponse:
        a = app_of(request)
        if request.method == "GET":
            return JSONResponse({"queue": a["queue"]})
        target = (await _json_body(request)).get("queue")
        if target in (a["queue"], a["queue"].rsplit(".", 1)[-1]):
            return JSONResponse({"queue": a["queue"]})
        raise bad_request(
            f"cannot move {a['id']} to {target}: emu's schedulers do not move applications"
        )

    async def new_application(request: Request) -> JSONResponse:
        reply = await write("new_application")
        return JSONResponse(
            {
                "application-id": reply["app_id"],
                "maximum-resource-capability": resource_info(reply["max_capability"]),
            }
        )

    async def submit(request: Request) -> Response:
        body = await _json_body(request)
        user = request.query_params.get("user.name", DEFAULT_USER)
        fields = submission_fields(body, user)
        await write("submit_application", **fields)
        location = f"{request.base_url}ws/v1/cluster/apps/{fields['app_id']}"
        return Response(status_code=202, headers={"Location": location})

    async def activities(request: Request) -> JSONResponse:
        a = app_of(request)
        return JSONResponse({"appActivities": snap().activities[a["id"]]})

    async def statistics(request: Request) -> JSONResponse:
        states = _csv_upper(request.query_params.get("states")) or list(APP_STATES)
        bad = [s for s in states if s not in APP_STATES]
        if bad:
            raise bad_request(f"Invalid application-state {bad[0]} specified")
        types = [t.lower() for t in _csv(request.query_params.get("applicationTypes"))]
        if len(types) > 1:
            raise bad_request(
                f"# of applicationTypes = {len(types)}, we temporarily support at most one "
                "applicationType"
            )
        items = []
        for s in states:
            count = sum(
                1
                for a in snap().apps
                if a["state"] == s and (not types or a["applicationType"].lower() == types[0])
            )
            items.append({"state": s, "type": types[0] if types else "*", "count": count})
        return JSONResponse({"appStatInfo": {"statItem": items}})

    async def node_labels(request: Request) -> JSONResponse:
        """getClusterNodeLabels: each label, its exclusivity and the
        resource of its registered nodes (PartitionInfo)."""
        reply = await write("node_labels_report")
        resources = reply["resources"]
        return JSONResponse(
            {
                "nodeLabelsInfo": {
                    "nodeLabelInfo": [
                        {
                            "name": name,
                            "exclusivity": exclusive,
                            "partitionInfo": {
                                "resourceAvailable": resource_info(
                                    resources.get(name, {"memory-mb": 0, "vcores": 0})
                                )
                            },
                        }
                        for name, exclusive in reply["labels"]
                    ]
                }
            }
        )

    async def node_to_labels(request: Request) -> JSONResponse:
        """getNodeToLabels: each labelled node (NodeId, port 0 for a node
        named by its host) and its labels."""
        reply = await write("node_labels_report")
        exclusive = {n: e for n, e in reply["labels"]}
        entries = [
            {
                "key": node_id if ":" in node_id else f"{node_id}:0",
                "value": {
                    "nodeLabelInfo": [{"name": label, "exclusivity": exclusive.get(label, True)}]
                },
            }
            for label, ids in sorted(reply["nodes"].items())
            for node_id in ids
        ]
        return JSONResponse({"nodeToLabelsInfo": {"nodeToLabels": {"entry": entries}}})

    base = "/ws/v1/cluster"
    apps_path = base + "/apps/{app_id}"
    attempt_path = apps_path + "/appattempts/{attempt_id}"
    return [
        Route(base, info),
        Route(base + "/", info),
        Route(base + "/info", info),
        Route(base + "/metrics", metrics),
        Route(base + "/scheduler", scheduler),
        Route(base + "/scheduler/app-activities/{app_id}", activities),
        Route(base + "/nodes", nodes),
        Route(base + "/nodes/{node_id}", node),
        Route(base + "/apps", apps, methods=["GET"]),
        Route(base + "/apps", submit, methods=["POST"]),
        Route(base + "/apps/new-application", new_application, methods=["POST"]),
        Route(base + "/appstatistics", statistics),
        Route(base + "/get-node-labels", node_labels),
        Route(base + "/get-node-to-labels", node_to_labels),
        Route(apps_path, app),
        Route(apps_path + "/appattempts", attempts),
        Route(attempt_path, attempt),
        Route(attempt_path + "/containers", containers),
        Route(attempt_path + "/containers/{container_id}", container),
        Route(apps_path + "/state", state, methods=["GET", "PUT"]),
        Route(apps_path + "/queue", queue, methods=["GET", "PUT"]),
    ]


def with_error_handlers(app: Starlette) -> Starlette:
    """Every error in YARN's RemoteException shape, including unknown paths."""

    async def yarn_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, YarnError)
        return _remote_exception(exc.status, exc.exception, exc.message)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        name = "NotFoundException" if exc.status_code == 404 else "WebApplicationException"
        return _remote_exception(exc.status_code, name, f"java.lang.Exception: {exc.detail}")

    app.add_exception_handler(YarnError, yarn_error)
    app.add_exception_handler(HTTPException, http_error)
    return app


# --- request parsing ---------------------------------------------------------------------------
def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _csv_upper(value: str | None) -> list[str]:
    return [v.upper() for v in _csv(value)]


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body() or b"{}")
    except json.JSONDecodeError as e:
        raise bad_request(f"the request body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    return body


def _int_param(params: Any, name: str) -> int | None:
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"{name} must be a number, got {raw!r}") from None
    if value < 0:
        raise bad_request(f"{name} must be greater than 0")
    return value


def filter_apps(apps: list[dict[str, Any]], params: Any) -> list[dict[str, Any]]:
    """RMWebServices.getApps' filters: states (or the deprecated state),
    finalStatus, user, queue, applicationTypes, name, started/finished time
    windows, limit."""
    states = _csv_upper(params.get("states")) + _csv_upper(params.get("state"))
    for s in states:
        if s not in APP_STATES:
            raise bad_request(
                f"Invalid application-state {s} specified. It should be one of "
                + ", ".join(APP_STATES)
            )
    final_status = params.get("finalStatus")
    user, queue, name = params.get("user"), params.get("queue"), params.get("name")
    types = {t.lower() for t in _csv(params.get("applicationTypes"))}
    limit = _int_param(params, "limit")
    windows = [
        (
            "startedTime",
            _int_param(params, "startedTimeBegin"),
            _int_param(params, "startedTimeEnd"),
        ),
        (
            "finishedTime",
            _int_param(params, "finishedTimeBegin"),
            _int_param(params, "finishedTimeEnd"),
        ),
    ]
    for key, begin, end in windows:
        if begin is not None and end is not None and end < begin:
            raise bad_request(f"{key}End must be greater than {key}Begin")
    out = []
    for a in apps:
        if states and a["state"] not in states:
            continue
        if final_status and a["finalStatus"] != final_status.upper():
            continue
        if user and a["user"] != user:
            continue
        if queue and queue not in (a["queue"], a["queue"].rsplit(".", 1)[-1]):
            continue
        if types and a["applicationType"].lower() not in types:
            continue
        if name and a["name"] != name:
            continue
        if any(
            (begin is not None and a[key] < begin) or (end is not None and a[key] > end)
            for key, begin, end in windows
        ):
            continue
        out.append(a)
        if limit is not None and len(out) >= limit:
            break
    return out


def submission_fields(body: dict[str, Any], user: str) -> dict[str, Any]:
    """A `submit_application` request from YARN's ApplicationSubmissionContextInfo.

    The app runs emu's generic AM with one task the size of its AM container
    for EMU_TASK_DURATION_MS (am-container-spec environment; default 60 s),
    since emu runs no real commands.
    """
    app_id = body.get("application-id")
    if not isinstance(app_id, str) or not app_id:
        raise bad_request("application-id is missing: get one from /apps/new-application")
    resource = body.get("resource") or {"memory": 1024, "vCores": 1}
    try:
        memory, vcores = int(resource.get("memory", 1024)), int(resource.get("vCores", 1))
        priority = int(body.get("priority", 0))
    except (TypeError, ValueError, AttributeError) as e:
        raise bad_request(f"resource/priority must be numbers: {e}") from None
    env = (body.get("am-container-spec") or {}).get("environment") or {}
    entries = env.get("entry") or []
    if isinstance(entries, dict):
        entries = [entries]
    settings = {e.get("key"): e.get("value") for e in entries if isinstance(e, dict)}
    raw_duration: Any = settings.get("EMU_TASK_DURATION_MS", REST_TASK_DURATION_MS)
    try:
        duration = int(raw_duration)
    except (TypeError, ValueError):  # TypeError: an entry with no "value"
        raise bad_request("EMU_TASK_DURATION_MS must be a number of milliseconds") from None
    name = str(body.get("application-name") or app_id)
    queue = str(body.get("queue") or "default")
    am = {"memory-mb": memory, "vcores": vcores}
    job = {
        "job_id": name,
        "am_type": "generic",
        "submit_ms": 0,
        "end_ms": None,
        "queue": queue,
        "user": user,
        "am_resource": am,
        "priority": priority,
        "tasks": [
            {
                "type": "task",
                "priority": 20,
                "duration_ms": duration,
                "resource": am,
                "hosts": [],
            }
        ],
        "params": {"submitted_over": "rest"},
    }
    return {
        "app_id": app_id,
        "name": name,
        "queue": queue,
        "user": user,
        "priority": priority,
        "am_resource": am,
        "am_type": "generic",
        "context": {"job": job, "racks": {}, "am_heartbeat_ms": 1000},
    }
