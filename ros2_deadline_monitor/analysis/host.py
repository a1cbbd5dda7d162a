"""Host context per stats period: CPU throttling of our cgroup and the monitor's own load.

Deadline misses often have a cause outside the monitored node: the container's CPU quota ran
out (cgroup ``cpu.stat`` throttling counters) or the machine was busy. The monitor also
reports its own CPU use, minor page faults and peak RSS so a user can see it is not the
cause. This module holds the computation only (which ``cpu.stat`` to read, how to parse it,
the change between two samples); ``live/host_sampler.py`` reads ``/proc``, the cgroup files
and ``getrusage``.

The cgroup is found from ``/proc/self/cgroup``: cgroup v2 (``0::/path``) first, with
``nr_periods``, ``nr_throttled`` and ``throttled_usec``; on a cgroup v1 host the ``cpu``
hierarchy (``throttled_time`` in ns) instead. In each, the process's own cgroup is tried
before the hierarchy's root. Inside a cgroup namespace the root is the container's cgroup;
throttling imposed by a parent outside the namespace is not visible.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import posixpath

from ros2_deadline_monitor.analysis.reports import HostReport

__all__ = ['CpuStat', 'CpuStatFile', 'cpu_stat_files', 'HostDeltas', 'parse_cpu_stat']

_NS_PER_US = 1_000


@dataclass(frozen=True)
class CpuStatFile:
    """One candidate ``cpu.stat`` and the key and unit of its throttled time."""

    path: str
    throttled_key: str
    ns_per_unit: int


@dataclass(frozen=True)
class CpuStat:
    """Cumulative throttling counters read from one ``cpu.stat``."""

    path: str
    nr_periods: int
    nr_throttled: int
    throttled_ns: int


def _join(root: str, cgroup_path: str) -> str:
    """Place a cgroup path as listed in ``/proc/self/cgroup`` under a hierarchy's mount."""
    return posixpath.join(root, cgroup_path.strip().lstrip('/'))


def cpu_stat_files(cgroup_root: str, proc_cgroup: str | None) -> list[CpuStatFile]:
    """List the ``cpu.stat`` files to try, most specific first.

    ``proc_cgroup``: the text of ``/proc/self/cgroup`` (None when unreadable).
    """
    v2_dirs: list[str] = []
    v1_dirs: list[str] = []
    for line in (proc_cgroup or '').splitlines():
        hierarchy_id, _, rest = line.partition(':')
        controllers, _, path = rest.partition(':')
        if hierarchy_id == '0' and controllers == '':
            v2_dirs.append(_join(cgroup_root, path))
        elif 'cpu' in controllers.split(','):
            mount = posixpath.join(cgroup_root, controllers)
            v1_dirs += [_join(mount, path), mount]
    v2_dirs.append(cgroup_root)
    files = [CpuStatFile(posixpath.join(d, 'cpu.stat'), 'throttled_usec', _NS_PER_US)
             for d in v2_dirs]
    files += [CpuStatFile(posixpath.join(d, 'cpu.stat'), 'throttled_time', 1)
              for d in v1_dirs]
    unique: dict[str, CpuStatFile] = {}
    for candidate in files:
        unique.setdefault(posixpath.normpath(candidate.path), candidate)
    return list(unique.values())


def parse_cpu_stat(candidate: CpuStatFile, text: str) -> CpuStat | None:
    """Return the throttling counters, or None if any of them is missing or malformed.

    The root cgroup of a v2 host has a ``cpu.stat`` without throttling keys; it does not
    count as available, since nothing about throttling can be read from it.
    """
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(' ')
        try:
            values[key] = int(value)
        except ValueError:
            continue
    try:
        return CpuStat(
            path=candidate.path,
            nr_periods=values['nr_periods'],
            nr_throttled=values['nr_throttled'],
            throttled_ns=values[candidate.throttled_key] * candidate.ns_per_unit,
        )
    except KeyError:
        return None


class HostDeltas:
    """Turns cumulative host counters into the change since the previous sample."""

    def __init__(self) -> None:
        self._prev_stat: CpuStat | None = None
        self._prev_wall_ns: int | None = None
        self._prev_cpu_ns = 0
        self._prev_minflt = 0

    @property
    def cgroup_stat_path(self) -> str | None:
        """The ``cpu.stat`` of the last sample, or None when none was readable."""
        return self._prev_stat.path if self._prev_stat is not None else None

    def report(self, now_ns: int, stat: CpuStat | None, cpu_ns: int, minor_faults_total: int,
               max_rss_bytes: int) -> HostReport:
        """Return host figures since the previous call; ``now_ns`` is a monotonic time.

        ``stat``: the cgroup counters now (None when unreadable); ``cpu_ns`` and
        ``minor_faults_total``: this process's CPU time and minor faults since it started.
        The first call, and the first after the counters' source changed or went backwards,
        gives zero deltas and a NaN ``cpu_fraction``; ``cgroup_available`` is always current.
        ``cpu_fraction`` is this process's CPU time over wall time (1.0 = one full core).
        ``max_rss_bytes`` is the process's peak resident set so far, not a delta.
        """
        prev = self._prev_stat
        periods = throttled = throttled_ns = 0
        if stat is not None and prev is not None and stat.path == prev.path:
            deltas = (stat.nr_periods - prev.nr_periods,
                      stat.nr_throttled - prev.nr_throttled,
                      stat.throttled_ns - prev.throttled_ns)
            if min(deltas) >= 0:
                periods, throttled, throttled_ns = deltas
        self._prev_stat = stat

        cpu_fraction = math.nan
        minor_faults = 0
        if self._prev_wall_ns is not None:
            wall_ns = now_ns - self._prev_wall_ns
            if wall_ns > 0:
                cpu_fraction = max(cpu_ns - self._prev_cpu_ns, 0) / wall_ns
            minor_faults = max(minor_faults_total - self._prev_minflt, 0)
        self._prev_wall_ns = now_ns
        self._prev_cpu_ns = cpu_ns
        self._prev_minflt = minor_faults_total

        return HostReport(
            cgroup_available=stat is not None,
            cgroup_nr_periods=periods,
            cgroup_nr_throttled=throttled,
            cgroup_throttled_ns=throttled_ns,
            cpu_fraction=cpu_fraction,
            minor_faults=minor_faults,
            max_rss_bytes=max_rss_bytes,
        )
