"""`emu replay` waits for every job's report, even when a submission
completes while a poll of the RM is in flight (seen as a flaky
multi-process test under load: the wait ended with no report of the job
just submitted, and the replay blamed an RM restart)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from emu.processes.replay import _wait


class _ClientFinishingASubmission:
    """Its first list_apps returns nothing, and while it is in flight the
    replayer's one submission completes; later polls list the app ended."""

    def __init__(self, replayer: SimpleNamespace) -> None:
        self.replayer = replayer
        self.polls = 0

    async def list_apps(self) -> list[dict[str, Any]]:
        self.polls += 1
        if self.polls == 1:
            self.replayer.app_of_job["j1"] = "application_1_0001"
            return []
        return [{"app_id": "application_1_0001", "state": "FINISHED"}]


async def test_a_submission_finishing_during_a_poll_is_waited_for(autojump_clock) -> None:
    replayer = SimpleNamespace(app_of_job={})
    client = _ClientFinishingASubmission(replayer)
    reports = await _wait(client, replayer, total=1, poll_ms=1000)  # type: ignore[arg-type]
    assert reports == [{"app_id": "application_1_0001", "state": "FINISHED"}]
    assert client.polls == 2
