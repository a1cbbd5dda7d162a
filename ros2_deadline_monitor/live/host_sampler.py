"""The host's counters read for ``analysis/host.py``: ``/proc``, the cgroup files, getrusage.

Anything unreadable is reported as unavailable; sampling never raises. The paths are
parameters so tests can point them at a fake tree.
"""

from __future__ import annotations

import os
import resource

from ros2_deadline_monitor.analysis.host import (
    cpu_stat_files,
    CpuStat,
    HostDeltas,
    parse_cpu_stat,
)
from ros2_deadline_monitor.analysis.reports import HostReport

__all__ = ['HostSampler']

_NS_PER_US = 1_000


def _read_text(path: str) -> str | None:
    """Return the file's text, or None if it cannot be read."""
    try:
        with open(path, encoding='ascii', errors='replace') as stream:
            return stream.read()
    except (OSError, ValueError):
        return None


def _cpu_ns(usage: resource.struct_rusage) -> int:
    """User plus system CPU time in ns (getrusage resolution is 1 µs)."""
    return round((usage.ru_utime + usage.ru_stime) * 1e6) * _NS_PER_US


class HostSampler:
    """Samples host context; each ``sample`` reports the change since the previous one.

    The list of candidate ``cpu.stat`` files is built once, from ``<proc_self>/cgroup`` at
    construction.
    """

    def __init__(self, cgroup_root: str = '/sys/fs/cgroup', proc_self: str = '/proc/self'):
        self._candidates = cpu_stat_files(cgroup_root,
                                          _read_text(os.path.join(proc_self, 'cgroup')))
        self._deltas = HostDeltas()

    @property
    def cgroup_stat_path(self) -> str | None:
        """The ``cpu.stat`` the last sample read, or None when none was readable."""
        return self._deltas.cgroup_stat_path

    def _read_cpu_stat(self) -> CpuStat | None:
        for candidate in self._candidates:
            text = _read_text(candidate.path)
            if text is not None:
                stat = parse_cpu_stat(candidate, text)
                if stat is not None:
                    return stat
        return None

    def sample(self, now_ns: int) -> HostReport:
        """Return host figures since the previous call (``HostDeltas.report``)."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return self._deltas.report(now_ns, self._read_cpu_stat(), _cpu_ns(usage),
                                   usage.ru_minflt, usage.ru_maxrss * 1024)
