"""Pure analysis core: numpy only, no ROS imports, fed integer-nanosecond events.

The same code serves the live node, the probe and the offline analyzer.
"""

from .config import AnalysisConfig, Thresholds, Timing, TopicConfig
from .cycles import count_cycles, CycleAnalyzer, CycleCounts
from .errors import BagError, CdrError, ConfigError, MonitorError
from .reports import ClockReport, HostReport, IntervalSummary, Level, TopicReport
from .ring import NO_VALUE
from .rtf import RtfAnalyzer

__all__ = [
    'NO_VALUE', 'AnalysisConfig', 'BagError', 'CdrError', 'ClockReport', 'ConfigError',
    'CycleAnalyzer', 'CycleCounts', 'HostReport', 'IntervalSummary', 'Level', 'MonitorError',
    'RtfAnalyzer', 'Thresholds', 'Timing', 'TopicConfig', 'TopicReport', 'count_cycles',
]
