"""Watching a run: the YARN REST API and the live pages.

- `view`    the read-only cluster view: RM state -> YARN REST shapes.
- `live`    the bridge between a run's loop and the server's thread.
- `api`     `/ws/v1/cluster/...` routes; `pages` `/simulate`, `/track`, `/cluster`.
- `server`  hypercorn's trio worker in its own thread.
"""
