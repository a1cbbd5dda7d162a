"""Offline analysis: the monitor's figures from a recorded rosbag2 bag, without ROS.

``bag`` reads bags with ``rosbags`` (never deserializing monitored topics), ``replay`` feeds
them through the same analysis core as the live node, ``accumulate`` keeps whole-run figures
in bounded memory, ``recorded`` summarizes recorded MonitorStats, ``tables`` / ``plots`` /
``html`` present the result and ``analyze`` is the command line.
"""

from .bag import BagSource
from .replay import BagAnalysis, Plan, TopicPlan
from .results import BagResult, ClockResult, RecordedStats, TopicResult

__all__ = [
    'BagAnalysis', 'BagResult', 'BagSource', 'ClockResult', 'Plan', 'RecordedStats',
    'TopicPlan', 'TopicResult',
]
