"""Offline analysis: the monitor's figures from a recorded rosbag2 bag, without ROS.

``bag`` reads bags with ``rosbags`` (never deserializing monitored topics), ``replay`` feeds
them through the same analysis session as the live node (which keeps the whole-run figures),
``series`` keeps the plot series in bounded memory, ``recorded`` summarizes recorded
MonitorStats, ``tables`` / ``plots`` / ``html`` present the result and ``analyze`` is the
command line.
"""

from .bag import BagSource
from .replay import BagAnalysis, Plan, TopicPlan
from .results import BagResult, ClockFacts, RecordedStats, TopicFacts

__all__ = [
    'BagAnalysis', 'BagResult', 'BagSource', 'ClockFacts', 'Plan', 'RecordedStats',
    'TopicFacts', 'TopicPlan',
]
