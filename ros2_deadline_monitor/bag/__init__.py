"""The bag adapter: a recorded rosbag2 bag through the analysis session, without ROS.

``reader`` reads bags with ``rosbags`` (never deserializing monitored topics), ``plan``
decides which topics and how, ``replay`` feeds them through the same session as the live
node, ``analyze`` is the command line and ``check`` the offline gate over many bags. The
tables, plots and HTML that present the result are outputs (``outputs/``).
"""

from ros2_deadline_monitor.bag.reader import BagSource
from ros2_deadline_monitor.bag.replay import BagAnalysis, Plan, TopicPlan
from ros2_deadline_monitor.outputs.bag_result import (
    BagResult,
    ClockFacts,
    RecordedStats,
    TopicFacts,
)

__all__ = [
    'BagAnalysis', 'BagResult', 'BagSource', 'ClockFacts', 'Plan', 'RecordedStats',
    'TopicFacts', 'TopicPlan',
]
