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


def test_cluster_filled_is_the_first_sample_at_the_most_placed_before_the_first_end() -> None:
    """Placements climb to 900 by 3 s and stay (the cluster is full) until
    the first map ends at 60 s; the burst is 900 containers in the wall
    time of the 3 s sample, not of the later flat samples."""
    placed = {0: 0, 1: 300, 2: 700, 3: 900}
    samples = [Sample(t * 0.1, t, 0, 0, placed.get(t, 900), 0.0) for t in range(0, 70)]
    samples[-5:] = [Sample(t * 0.1, t, 0, 0, 950, 0.0) for t in range(65, 70)]
    r = _stats([*samples])
    n, wall = r.cluster_filled(60.0) or (0, 0.0)
    assert n == 900
    assert abs(wall - 0.3) < 1e-9
    assert r.cluster_filled(0.0) is None
