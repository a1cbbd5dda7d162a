"""Tests for host context sampling (live/host_sampler.py, analysis/host.py) on fake trees."""

import math
from pathlib import Path

import pytest

from ros2_deadline_monitor.analysis.reports import HostReport
from ros2_deadline_monitor.live.host_sampler import HostSampler

SECOND_NS = 1_000_000_000


def v2_stat(periods: int, throttled: int, throttled_usec: int) -> str:
    return (f'usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\nnr_periods {periods}\n'
            f'nr_throttled {throttled}\nthrottled_usec {throttled_usec}\nnr_bursts 0\n'
            'burst_usec 0\n')


def v1_stat(periods: int, throttled: int, throttled_time_ns: int) -> str:
    return (f'nr_periods {periods}\nnr_throttled {throttled}\n'
            f'throttled_time {throttled_time_ns}\nnr_bursts 0\nburst_time 0\n')


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def tree(tmp_path):
    """Build a fake /sys/fs/cgroup and /proc/self; the process lives in /app.slice/run.scope."""
    root = tmp_path / 'cgroup'
    proc = tmp_path / 'proc'
    write(proc / 'cgroup', '0::/app.slice/run.scope\n')
    root.mkdir()
    return root, proc


def sampler(root: Path, proc: Path) -> HostSampler:
    return HostSampler(cgroup_root=str(root), proc_self=str(proc))


def test_own_cgroup_exact_deltas(tree):
    root, proc = tree
    own = root / 'app.slice' / 'run.scope' / 'cpu.stat'
    write(own, v2_stat(100, 7, 25_000))
    write(root / 'cpu.stat', v2_stat(9_999, 9_999, 9_999))  # must not be used
    host = sampler(root, proc)

    first = host.sample(1 * SECOND_NS)
    assert first.cgroup_available
    assert (first.cgroup_nr_periods, first.cgroup_nr_throttled, first.cgroup_throttled_ns) == (
        0, 0, 0)
    assert math.isnan(first.cpu_fraction)
    assert first.minor_faults == 0
    assert host.cgroup_stat_path == str(own)

    write(own, v2_stat(110, 10, 31_500))
    second = host.sample(2 * SECOND_NS)
    assert second.cgroup_available
    assert second.cgroup_nr_periods == 10
    assert second.cgroup_nr_throttled == 3
    assert second.cgroup_throttled_ns == 6_500_000

    third = host.sample(3 * SECOND_NS)
    assert (third.cgroup_nr_periods, third.cgroup_nr_throttled, third.cgroup_throttled_ns) == (
        0, 0, 0)


def test_falls_back_to_root_when_own_cgroup_missing(tree):
    root, proc = tree
    write(root / 'cpu.stat', v2_stat(5, 1, 1))
    host = sampler(root, proc)
    assert host.sample(0).cgroup_available
    assert host.cgroup_stat_path == str(root / 'cpu.stat')
    write(root / 'cpu.stat', v2_stat(8, 2, 3))
    report = host.sample(SECOND_NS)
    assert (report.cgroup_nr_periods, report.cgroup_nr_throttled, report.cgroup_throttled_ns) == (
        3, 1, 2_000)


def test_own_cgroup_without_cpu_controller_falls_back(tree):
    root, proc = tree
    # Without the cpu controller, cpu.stat has usage figures but no throttling counters.
    write(root / 'app.slice' / 'run.scope' / 'cpu.stat', 'usage_usec 5\nuser_usec 3\n')
    write(root / 'cpu.stat', v2_stat(1, 0, 0))
    host = sampler(root, proc)
    assert host.sample(0).cgroup_available
    assert host.cgroup_stat_path == str(root / 'cpu.stat')


def test_no_throttling_counters_anywhere_is_unavailable(tree):
    root, proc = tree
    write(root / 'cpu.stat', 'usage_usec 5\nuser_usec 3\nsystem_usec 2\n')
    report = sampler(root, proc).sample(0)
    assert not report.cgroup_available


def test_missing_cgroup_dir_is_unavailable(tmp_path):
    host = HostSampler(cgroup_root=str(tmp_path / 'nothing'), proc_self=str(tmp_path / 'none'))
    first = host.sample(0)
    second = host.sample(SECOND_NS)
    for report in (first, second):
        assert isinstance(report, HostReport)
        assert not report.cgroup_available
        assert (report.cgroup_nr_periods, report.cgroup_nr_throttled,
                report.cgroup_throttled_ns) == (0, 0, 0)
    assert host.cgroup_stat_path is None
    # The process figures do not depend on the cgroup.
    assert math.isfinite(second.cpu_fraction)
    assert second.max_rss_bytes > 0


def test_unreadable_and_malformed_files_are_unavailable(tree):
    root, proc = tree
    (root / 'app.slice' / 'run.scope' / 'cpu.stat').mkdir(parents=True)  # read: OSError
    write(root / 'cpu.stat', 'nr_periods x\nnr_throttled 1\nthrottled_usec 2\n')
    assert not sampler(root, proc).sample(0).cgroup_available
    write(root / 'cpu.stat', b'\xff\xfe garbage\x00'.decode('latin-1'))
    assert not sampler(root, proc).sample(0).cgroup_available


def test_cgroup_v1_cpu_hierarchy(tmp_path):
    root = tmp_path / 'cgroup'
    proc = tmp_path / 'proc'
    write(proc / 'cgroup',
          '12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n')
    stat = root / 'cpu,cpuacct' / 'docker' / 'abc' / 'cpu.stat'
    write(stat, v1_stat(40, 4, 2_000_000))
    write(root / 'cpu.stat', 'usage_usec 1\n')  # hybrid host: v2 root without throttling
    host = sampler(root, proc)
    assert host.sample(0).cgroup_available
    assert host.cgroup_stat_path == str(stat)
    write(stat, v1_stat(50, 6, 2_500_123))
    report = host.sample(SECOND_NS)
    assert (report.cgroup_nr_periods, report.cgroup_nr_throttled, report.cgroup_throttled_ns) == (
        10, 2, 500_123)


def test_counters_going_backwards_rebaseline(tree):
    root, proc = tree
    own = root / 'app.slice' / 'run.scope' / 'cpu.stat'
    write(own, v2_stat(100, 10, 1_000))
    host = sampler(root, proc)
    host.sample(0)
    write(own, v2_stat(3, 1, 10))  # cgroup recreated: counters restarted
    reset = host.sample(SECOND_NS)
    assert reset.cgroup_available
    assert (reset.cgroup_nr_periods, reset.cgroup_nr_throttled, reset.cgroup_throttled_ns) == (
        0, 0, 0)
    write(own, v2_stat(5, 2, 30))
    after = host.sample(2 * SECOND_NS)
    assert (after.cgroup_nr_periods, after.cgroup_nr_throttled, after.cgroup_throttled_ns) == (
        2, 1, 20_000)


def test_source_change_and_outage_rebaseline(tree):
    root, proc = tree
    own = root / 'app.slice' / 'run.scope' / 'cpu.stat'
    write(own, v2_stat(100, 10, 1_000))
    write(root / 'cpu.stat', v2_stat(1, 1, 1))
    host = sampler(root, proc)
    host.sample(0)
    own.unlink()  # now only the root is readable: its counters are not comparable
    switched = host.sample(SECOND_NS)
    assert switched.cgroup_available
    assert host.cgroup_stat_path == str(root / 'cpu.stat')
    assert (switched.cgroup_nr_periods, switched.cgroup_nr_throttled) == (0, 0)
    (root / 'cpu.stat').unlink()
    assert not host.sample(2 * SECOND_NS).cgroup_available
    write(root / 'cpu.stat', v2_stat(50, 5, 5))
    back = host.sample(3 * SECOND_NS)
    assert back.cgroup_available
    assert (back.cgroup_nr_periods, back.cgroup_nr_throttled) == (0, 0)
    write(root / 'cpu.stat', v2_stat(51, 5, 5))
    assert host.sample(4 * SECOND_NS).cgroup_nr_periods == 1


def test_process_figures_after_burning_cpu(tmp_path):
    host = HostSampler(cgroup_root=str(tmp_path), proc_self=str(tmp_path))
    first = host.sample(0)
    assert math.isnan(first.cpu_fraction)
    total = sum(i * i for i in range(300_000))
    garbage = [bytearray(4096) for _ in range(256)]  # touch fresh pages
    assert total > 0 and len(garbage) == 256
    report = host.sample(SECOND_NS // 10)
    assert math.isfinite(report.cpu_fraction)
    assert report.cpu_fraction >= 0
    assert report.minor_faults >= 0
    assert report.max_rss_bytes > 0
    assert report.max_rss_bytes % 1024 == 0


def test_wall_time_not_advancing_gives_nan_fraction(tmp_path):
    host = HostSampler(cgroup_root=str(tmp_path), proc_self=str(tmp_path))
    host.sample(5 * SECOND_NS)
    assert math.isnan(host.sample(5 * SECOND_NS).cpu_fraction)
    assert math.isnan(host.sample(4 * SECOND_NS).cpu_fraction)
    assert math.isfinite(host.sample(6 * SECOND_NS).cpu_fraction)


def test_real_system_never_raises():
    host = HostSampler()
    host.sample(0)
    report = host.sample(SECOND_NS)
    assert isinstance(report, HostReport)
    assert isinstance(report.cgroup_available, bool)
    assert min(report.cgroup_nr_periods, report.cgroup_nr_throttled,
               report.cgroup_throttled_ns) >= 0
