"""Pure analysis core: numpy only, no ROS imports, fed integer-nanosecond events.

One analysis ``Session`` serves the live node and the offline analyzer; its snapshots feed
every output. The probe uses the per-topic ``CycleAnalyzer`` directly.
"""

from .config import AnalysisConfig, Thresholds, Timing, TopicConfig
from .cycles import count_cycles, CycleAnalyzer, CycleCounts
from .errors import BagError, CdrError, ConfigError, MonitorError
from .reports import ClockReport, HostReport, IntervalSummary, Level, TopicReport
from .ring import NO_VALUE
from .rtf import RtfAnalyzer
from .session import Changes, Session, TopicState
from .snapshot import ClockSnapshot, HostSnapshot, Receive, Snapshot, TopicSnapshot

__all__ = [
    'NO_VALUE', 'AnalysisConfig', 'BagError', 'CdrError', 'Changes', 'ClockReport',
    'ClockSnapshot', 'ConfigError', 'CycleAnalyzer', 'CycleCounts', 'HostReport',
    'HostSnapshot', 'IntervalSummary', 'Level', 'MonitorError', 'Receive', 'RtfAnalyzer',
    'Session', 'Snapshot', 'Thresholds', 'Timing', 'TopicConfig', 'TopicReport',
    'TopicSnapshot', 'TopicState', 'count_cycles',
]
