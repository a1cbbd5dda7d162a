"""Launch the deadline monitor with a YAML configuration.

    ros2 launch ros2_deadline_monitor monitor.launch.py
    ros2 launch ros2_deadline_monitor monitor.launch.py config:=$HOME/my_monitor.yaml
    ros2 launch ros2_deadline_monitor monitor.launch.py use_sim_time:=true start_aggregator:=true

The monitor publishes ``~/stats`` (``/deadline_monitor/stats`` by default) and
``/diagnostics``. With ``start_aggregator:=true`` a ``diagnostic_aggregator`` groups the
diagnostics (config/diagnostic_aggregator.yaml) so that ``rqt_robot_monitor`` shows a tidy
tree; the aggregator is an optional dependency of this package (apt:
``ros-$ROS_DISTRO-diagnostic-aggregator``).

gazebo.launch.py includes this file; demo.launch.py declares its own monitor with the demo's
settings.
"""

import os
import sys

from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_context import LaunchContext
from launch.launch_description import LaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'ros2_deadline_monitor'
BOOLEANS = ['true', 'false', 'True', 'False']
NODE_NAME = 'deadline_monitor'
LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'fatal']
"""rcutils severities; ``choices`` makes launch refuse anything else before a node starts."""


def colour_env() -> dict[str, str]:
    """Colour the monitor's log lines only when this launch writes to a terminal.

    emulate_tty makes the node believe it has one (for line-buffered output), so rcutils
    would colour lines that end up in a redirected file; a user's own setting is kept.
    """
    default = '1' if sys.stdout.isatty() else '0'
    return {'RCUTILS_COLORIZED_OUTPUT': os.environ.get('RCUTILS_COLORIZED_OUTPUT', default)}


def check_config(context: LaunchContext) -> list:
    """Refuse a ``config`` file that does not exist, before the monitor starts.

    launch_ros only warns ("Parameter file path is not a file") and starts the monitor
    without it, which then watches no topic at all.
    """
    path = LaunchConfiguration('config').perform(context)
    if not os.path.isfile(path):
        raise FileNotFoundError(f'launch argument config:={path}: no such file')
    return []


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments, the monitor node and the optional diagnostic aggregator."""
    config = LaunchConfiguration('config')
    use_sim_time = LaunchConfiguration('use_sim_time')

    arguments = [
        DeclareLaunchArgument(
            'config',
            default_value=PathJoinSubstitution([FindPackageShare(PACKAGE), 'config',
                                                'monitor.yaml']),
            description='YAML parameter file of the monitor (topics to watch, periods, '
                        'thresholds); every parameter is documented in the shipped '
                        'config/monitor.yaml.'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description="ROS namespace of the monitor node; its stats topic becomes "
                        "<namespace>/deadline_monitor/stats. '' for the root namespace."),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false', choices=BOOLEANS,
            description='Follow /clock for ROS time (true next to a simulator). Statistics '
                        'are still reported on a steady wall-clock timer.'),
        DeclareLaunchArgument(
            'log_level', default_value='info', choices=LOG_LEVELS,
            description="Logging level of the monitor's own logger; rcl and the middleware "
                        "stay at info (their debug output would bury the monitor's)."),
        DeclareLaunchArgument(
            'start_aggregator', default_value='false', choices=BOOLEANS,
            description='Also start diagnostic_aggregator with '
                        'config/diagnostic_aggregator.yaml, for rqt_robot_monitor.'),
    ]

    # '--log-level <logger>:=<level>' sets the monitor's logger only. Its name is the node's
    # namespace with dots, then the node name: robot1/deadline_monitor -> robot1.deadline_monitor.
    logger = PythonExpression([
        "'.'.join([part for part in '", LaunchConfiguration('namespace'),
        f"'.split('/') if part] + ['{NODE_NAME}'])"])
    monitor = Node(
        package=PACKAGE,
        executable='monitor',
        name=NODE_NAME,
        namespace=LaunchConfiguration('namespace'),
        # The file first, then the launch argument: a later entry wins.
        parameters=[config, {'use_sim_time': use_sim_time}],
        ros_arguments=['--log-level', [logger, ':=', LaunchConfiguration('log_level')]],
        output='screen',
        emulate_tty=True,
        additional_env=colour_env(),
    )

    # First: it refuses start_aggregator:=true without diagnostic_aggregator before the
    # monitor starts.
    aggregator = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare(PACKAGE), 'launch', 'aggregator.launch.py'])),
        launch_arguments={'start_aggregator': LaunchConfiguration('start_aggregator'),
                          'use_sim_time': use_sim_time}.items(),
    )

    return LaunchDescription([*arguments, OpaqueFunction(function=check_config), aggregator,
                              monitor])
