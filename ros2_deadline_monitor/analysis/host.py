"""Host context per stats period: CPU throttling of our cgroup and the monitor's own load.

Deadline misses often have a cause outside the monitored node (DESIGN §5): the container's
CPU quota ran out (cgroup ``cpu.stat`` throttling counters) or the machine was busy. The
monitor also reports its own CPU use, minor page faults and peak RSS so a user can see it is
not the cause. Anything unreadable is reported as unavailable; sampling never raises.

The cgroup is found from ``/proc/self/cgroup``: cgroup v2 (``0::/path``) first, with
``nr_periods``, ``nr_throttled`` and ``throttled_usec``; on a cgroup v1 host the ``cpu``
hierarchy (``throttled_time`` in ns) instead. In each, the process's own cgroup is tried
before the hierarchy's root. Inside a cgroup namespace the root is the container's cgroup;
throttling imposed by a parent outside the namespace is not visible.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import os
import resource

from ros2_deadline_monitor.analysis.reports import HostReport

__all__ = ['HostSampler']

_NS_PER_US = 1_000


@dataclass(frozen=True)
class _CpuStatFile:
    """One candidate ``cpu.stat`` and the key and unit of its throttled time."""

    path: str
    throttled_key: str
    ns_per_unit: int


@dataclass(frozen=True)
class _CpuStat:
    """Cumulative throttling counters read from one ``cpu.stat``."""

    path: str
    nr_periods: int
    nr_throttled: int
    throttled_ns: int


def _read_text(path: str) -> str | None:
    """Return the file's text, or None if it cannot be read."""
    try:
        with open(path, encoding='ascii', errors='replace') as stream:
            return stream.read()
    except (OSError, ValueError):
        return None


def _join(root: str, cgroup_path: str) -> str:
    """Place a cgroup path as listed in ``/proc/self/cgroup`` under a hierarchy's mount."""
    return os.path.join(root, cgroup_path.strip().lstrip('/'))


def _candidates(cgroup_root: str, proc_cgroup: str | None) -> list[_CpuStatFile]:
    """List the ``cpu.stat`` files to try, most specific first."""
    v2_dirs: list[str] = []
    v1_dirs: list[str] = []
    for line in (proc_cgroup or '').splitlines():
        hierarchy_id, _, rest = line.partition(':')
        controllers, _, path = rest.partition(':')
        if hierarchy_id == '0' and controllers == '':
            v2_dirs.append(_join(cgroup_root, path))
        elif 'cpu' in controllers.split(','):
            mount = os.path.join(cgroup_root, controllers)
            v1_dirs += [_join(mount, path), mount]
    v2_dirs.append(cgroup_root)
    files = [_CpuStatFile(os.path.join(d, 'cpu.stat'), 'throttled_usec', _NS_PER_US)
             for d in v2_dirs]
    files += [_CpuStatFile(os.path.join(d, 'cpu.stat'), 'throttled_time', 1) for d in v1_dirs]
    unique: dict[str, _CpuStatFile] = {}
    for candidate in files:
        unique.setdefault(os.path.normpath(candidate.path), candidate)
    return list(unique.values())


def _parse_cpu_stat(candidate: _CpuStatFile, text: str) -> _CpuStat | None:
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
        return _CpuStat(
            path=candidate.path,
            nr_periods=values['nr_periods'],
            nr_throttled=values['nr_throttled'],
            throttled_ns=values[candidate.throttled_key] * candidate.ns_per_unit,
        )
    except KeyError:
        return None


def _cpu_ns(usage: resource.struct_rusage) -> int:
    """User plus system CPU time in ns (getrusage resolution is 1 µs)."""
    return round((usage.ru_utime + usage.ru_stime) * 1e6) * _NS_PER_US


class HostSampler:
    """Samples host context; each ``sample`` reports the change since the previous one.

    The paths are parameters so tests can point them at a fake tree. The list of candidate
    ``cpu.stat`` files is built once, from ``<proc_self>/cgroup`` at construction.
    """

    def __init__(self, cgroup_root: str = '/sys/fs/cgroup', proc_self: str = '/proc/self'):
        self._candidates = _candidates(cgroup_root, _read_text(os.path.join(proc_self, 'cgroup')))
        self._prev_stat: _CpuStat | None = None
        self._prev_wall_ns: int | None = None
        self._prev_cpu_ns = 0
        self._prev_minflt = 0

    @property
    def cgroup_stat_path(self) -> str | None:
        """The ``cpu.stat`` the last sample read, or None when none was readable."""
        return self._prev_stat.path if self._prev_stat is not None else None

    def _read_cpu_stat(self) -> _CpuStat | None:
        for candidate in self._candidates:
            text = _read_text(candidate.path)
            if text is not None:
                stat = _parse_cpu_stat(candidate, text)
                if stat is not None:
                    return stat
        return None

    def sample(self, now_ns: int) -> HostReport:
        """Return host figures since the previous call; ``now_ns`` is a monotonic time.

        The first call, and the first after the counters' source changed or went backwards,
        gives zero deltas and a NaN ``cpu_fraction``; ``cgroup_available`` is always current.
        ``cpu_fraction`` is this process's CPU time over wall time (1.0 = one full core).
        ``max_rss_bytes`` is the process's peak resident set so far, not a delta.
        """
        stat = self._read_cpu_stat()
        prev = self._prev_stat
        periods = throttled = throttled_ns = 0
        if stat is not None and prev is not None and stat.path == prev.path:
            deltas = (stat.nr_periods - prev.nr_periods,
                      stat.nr_throttled - prev.nr_throttled,
                      stat.throttled_ns - prev.throttled_ns)
            if min(deltas) >= 0:
                periods, throttled, throttled_ns = deltas
        self._prev_stat = stat

        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu_ns = _cpu_ns(usage)
        cpu_fraction = math.nan
        minor_faults = 0
        if self._prev_wall_ns is not None:
            wall_ns = now_ns - self._prev_wall_ns
            if wall_ns > 0:
                cpu_fraction = max(cpu_ns - self._prev_cpu_ns, 0) / wall_ns
            minor_faults = max(usage.ru_minflt - self._prev_minflt, 0)
        self._prev_wall_ns = now_ns
        self._prev_cpu_ns = cpu_ns
        self._prev_minflt = usage.ru_minflt

        return HostReport(
            cgroup_available=stat is not None,
            cgroup_nr_periods=periods,
            cgroup_nr_throttled=throttled,
            cgroup_throttled_ns=throttled_ns,
            cpu_fraction=cpu_fraction,
            minor_faults=minor_faults,
            max_rss_bytes=usage.ru_maxrss * 1024,
        )
