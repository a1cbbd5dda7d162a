"""The measurement: numpy only, no ROS import, fed integer-nanosecond events.

One analysis ``Session`` serves the live node, the bag replay and the probe; its
``Snapshot`` is the one result model every output reads, described figure by figure in
``figures.py``. A bag result (the final snapshot plus bag facts) is ``outputs/bag_result.py``.
"""

from ros2_deadline_monitor.analysis.config import AnalysisConfig, Thresholds, Timing, TopicConfig
from ros2_deadline_monitor.analysis.cycle_counts import count_cycles, CycleCounts
from ros2_deadline_monitor.analysis.cycles import CycleAnalyzer
from ros2_deadline_monitor.analysis.errors import BagError, CdrError, ConfigError, MonitorError
from ros2_deadline_monitor.analysis.reports import (
    ClockReport,
    HostReport,
    IntervalSummary,
    Level,
    TopicReport,
)
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer
from ros2_deadline_monitor.analysis.session import Changes, Session, TopicState
from ros2_deadline_monitor.analysis.snapshot import (
    ClockSnapshot,
    HostSnapshot,
    Receive,
    Snapshot,
    TopicSnapshot,
)

__all__ = [
    'NO_VALUE', 'AnalysisConfig', 'BagError', 'CdrError', 'Changes', 'ClockReport',
    'ClockSnapshot', 'ConfigError', 'CycleAnalyzer', 'CycleCounts', 'HostReport',
    'HostSnapshot', 'IntervalSummary', 'Level', 'MonitorError', 'Receive', 'RtfAnalyzer',
    'Session', 'Snapshot', 'Thresholds', 'Timing', 'TopicConfig', 'TopicReport',
    'TopicSnapshot', 'TopicState', 'count_cycles',
]
