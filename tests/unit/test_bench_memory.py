"""The bench's memory figures: KB per node and per running app from samples."""

from __future__ import annotations

from emu.bench.figures import RunStats, Sample


def _stats(samples: list[Sample]) -> RunStats:
    return RunStats(
        nodes=1000,
        jobs=0,
        finished=0,
        containers=0,
        simulated_s=len(samples),
        wall_s=1.0,
        heartbeats=0,
        peak_rss_mb=max(s.rss_mb for s in samples),
        base_rss_mb=40.0,
        samples=samples,
        prepared_rss_mb=60.0,
    )


def test_per_node_is_the_cluster_before_apps_and_per_app_the_slope_to_the_peak() -> None:
    """100 MB for the 1,000-node cluster at 1 s, then 64 KB per running app
    up to the peak of 200 apps; afterwards RSS stays while apps drain, which
    must not flatten the per-app slope."""
    rise = [Sample(0, t, 2 * (t - 1), 0, 0, 160 + 2 * (t - 1) * 64 / 1024) for t in range(1, 102)]
    drain = [Sample(0, t, 200 - (t - 101) * 10, 0, 0, 172.5) for t in range(102, 120)]
    r = _stats([Sample(0, 0, 0, 0, 0, 61.0), *rise, *drain])
    assert round(r.kb_per_node(), 1) == 102.4
    assert round(r.kb_per_running_app(), 3) == 64.0
    assert "102.4 KB/node; 64 KB per running app" in r.memory_detail()


def test_no_samples_or_no_change_in_apps_gives_zero() -> None:
    flat = [Sample(0, t, 5, 0, 0, 100.0) for t in range(3)]
    r = _stats(flat)
    assert r.kb_per_running_app() == 0.0
    assert _stats([Sample(0, 0.5, 0, 0, 0, 70.0)]).kb_per_node() == 0.0
