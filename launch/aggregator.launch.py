"""Launch diagnostic_aggregator with the shipped grouping, for rqt_robot_monitor.

    ros2 launch ros2_deadline_monitor aggregator.launch.py start_aggregator:=true

monitor.launch.py and demo.launch.py include this file first, so both start the same
aggregator and refuse ``start_aggregator:=true`` without diagnostic_aggregator before any of
their nodes starts. The aggregator is an optional dependency of this package (apt:
``ros-$ROS_DISTRO-diagnostic-aggregator``).
"""

from ament_index_python.packages import get_package_prefix, PackageNotFoundError
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.launch_context import LaunchContext
from launch.launch_description import LaunchDescription
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'ros2_deadline_monitor'
BOOLEANS = ['true', 'false', 'True', 'False']


def check_aggregator(context: LaunchContext) -> list:
    """Refuse ``start_aggregator:=true`` without diagnostic_aggregator, before any node starts.

    Launch would fail only when it reaches the aggregator, the other nodes left running.
    """
    if LaunchConfiguration('start_aggregator').perform(context).lower() == 'true':
        try:
            get_package_prefix('diagnostic_aggregator')
        except PackageNotFoundError:
            raise LookupError('launch argument start_aggregator:=true needs the package '
                              'diagnostic_aggregator (apt install '
                              'ros-jazzy-diagnostic-aggregator)') from None
    return []


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments, the check and the aggregator (started only when asked)."""
    arguments = [
        DeclareLaunchArgument(
            'start_aggregator', default_value='false', choices=BOOLEANS,
            description='Start diagnostic_aggregator with config/diagnostic_aggregator.yaml, '
                        'for rqt_robot_monitor.'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false', choices=BOOLEANS,
            description='Follow /clock for ROS time, as the monitor does.'),
    ]

    # Left at its default node name (the YAML is keyed by it) and in the root namespace:
    # it reads and writes the absolute /diagnostics and /diagnostics_agg topics.
    aggregator = Node(
        package='diagnostic_aggregator',
        executable='aggregator_node',
        parameters=[PathJoinSubstitution([FindPackageShare(PACKAGE), 'config',
                                          'diagnostic_aggregator.yaml']),
                    {'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'),
                                                    value_type=bool)}],
        output='screen',
        condition=IfCondition(LaunchConfiguration('start_aggregator')),
    )

    return LaunchDescription([*arguments, OpaqueFunction(function=check_aggregator),
                              aggregator])
