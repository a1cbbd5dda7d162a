"""Launch the reference measurement: a simulator stand-in, a stalling controller, the monitor.

    ros2 launch ros2_deadline_monitor demo.launch.py
    ros2 launch ros2_deadline_monitor demo.launch.py target_rtf:=0.5 stall_ms:=0.0 duration:=10
    ros2 launch ros2_deadline_monitor demo.launch.py start_aggregator:=true

``sim_clock`` publishes ``/clock`` at the target real time factor, ``demo_controller`` runs
a timer at ``rate_hz`` that stalls ``stall_ms`` every ``stall_every``-th cycle and publishes
a stamped ``geometry_msgs/TwistStamped`` on /demo/cmd at the end of each cycle, and the monitor
watches that topic next to the clock. With the defaults the clock keeps an RTF of about 1.0
while the controller misses its 10 ms deadline twice a second; watch ``/diagnostics`` or
``/deadline_monitor/stats``, or stop the launch (Ctrl-C, or ``duration``) to see the
monitor's summary. With ``start_aggregator:=true`` a ``diagnostic_aggregator`` groups the
diagnostics for ``rqt_robot_monitor`` (aggregator.launch.py, as in monitor.launch.py).

The monitor is declared here with the demo's own settings rather than by including
monitor.launch.py: it watches exactly the controller's topic, with the controller's rate and
the simulator's target RTF, and needs no config file.
"""

import os
import sys

from launch.actions import (
    DeclareLaunchArgument,
    IncludeLaunchDescription,
    OpaqueFunction,
    Shutdown,
    TimerAction,
)
from launch.conditions import IfCondition
from launch.launch_context import LaunchContext
from launch.launch_description import LaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from ros2_deadline_monitor.configuration.launch_arguments import (
    check_numeric_arguments,
    stop_on_exit,
)

PACKAGE = 'ros2_deadline_monitor'
BOOLEANS = ['true', 'false', 'True', 'False']
CONTROL_TOPIC = '/demo/cmd'
NUMBERS = {'target_rtf': float, 'rate_hz': float, 'stall_ms': float, 'stall_every': int,
           'duration': float}
"""The numeric launch arguments and their types, checked before any node starts."""
MINIMUMS = {'duration': 0.0}
"""Arguments of this launch file itself with a floor (the nodes check their own ranges)."""


def check_numbers(context: LaunchContext) -> list:
    """Refuse a numeric argument that is not a (finite) number, naming it, before any node."""
    check_numeric_arguments(context.launch_configurations, NUMBERS, MINIMUMS)
    return []


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments, the three nodes and the optional stop timer."""
    use_sim_time = ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)
    target_rtf = ParameterValue(LaunchConfiguration('target_rtf'), value_type=float)
    rate_hz = ParameterValue(LaunchConfiguration('rate_hz'), value_type=float)
    duration = LaunchConfiguration('duration')

    arguments = [
        DeclareLaunchArgument(
            'target_rtf', default_value='1.0',
            description='Real time factor sim_clock paces /clock to (sim time over wall '
                        'time); the monitor rates the clock against it.'),
        DeclareLaunchArgument(
            'rate_hz', default_value='100.0',
            description='Rate of the controller timer [Hz] (its deadline is one period).'),
        DeclareLaunchArgument(
            'stall_ms', default_value='22.0',
            description='How long a stalled controller cycle takes [ms, wall clock]; 0.0 for '
                        'no stalls.'),
        DeclareLaunchArgument(
            'stall_every', default_value='50',
            description='Stall one controller cycle in this many (50: cycles 24, 74, ...); '
                        '0 never.'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='true',
            choices=BOOLEANS,
            description='Run the controller and the monitor on /clock from sim_clock; false '
                        'runs the controller on the system clock and starts no sim_clock.'),
        DeclareLaunchArgument(
            'duration', default_value='0',
            description='Stop everything after this many seconds of wall time; 0 runs '
                        'until Ctrl-C.'),
        DeclareLaunchArgument(
            'start_aggregator', default_value='false', choices=BOOLEANS,
            description='Also start diagnostic_aggregator with '
                        'config/diagnostic_aggregator.yaml, for rqt_robot_monitor.'),
    ]

    sim_clock = Node(
        package=PACKAGE,
        executable='sim_clock',
        name='sim_clock',
        parameters=[{
            'target_rtf': target_rtf,
            # Hold /clock until the monitor and the controller subscribe, so the
            # controller's first cycles are not measured against a clock already running.
            'wait_for_subscribers': 2,
        }],
        output='screen',
        condition=IfCondition(LaunchConfiguration('use_sim_time')),
        on_exit=stop_on_exit(Shutdown),
    )

    controller = Node(
        package=PACKAGE,
        executable='demo_controller',
        name='demo_controller',
        parameters=[{
            'use_sim_time': use_sim_time,
            'rate_hz': rate_hz,
            'stall_ms': ParameterValue(LaunchConfiguration('stall_ms'), value_type=float),
            'stall_every': ParameterValue(LaunchConfiguration('stall_every'), value_type=int),
            'topic': CONTROL_TOPIC,
            # Start the timer once the monitor listens (and /clock runs, under sim time).
            'wait_for_subscribers': 1,
        }],
        output='screen',
        on_exit=stop_on_exit(Shutdown),
    )

    monitor = Node(
        package=PACKAGE,
        executable='monitor',
        name='deadline_monitor',
        parameters=[{
            'use_sim_time': use_sim_time,
            'target_rtf': target_rtf,
            'topics': ['cmd'],
            'topic.cmd.name': CONTROL_TOPIC,
            'topic.cmd.rate_hz': rate_hz,
            # The controller stamps each message with the start of its cycle.
            'topic.cmd.stamp': 'start',
        }],
        output='screen',
        emulate_tty=True,
        # emulate_tty would make rcutils colour lines that end up in a redirected file.
        additional_env={'RCUTILS_COLORIZED_OUTPUT': os.environ.get(
            'RCUTILS_COLORIZED_OUTPUT', '1' if sys.stdout.isatty() else '0')},
    )

    # First: it refuses start_aggregator:=true without diagnostic_aggregator before any
    # node starts.
    aggregator = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare(PACKAGE), 'launch', 'aggregator.launch.py'])),
        launch_arguments={'start_aggregator': LaunchConfiguration('start_aggregator'),
                          'use_sim_time': LaunchConfiguration('use_sim_time')}.items(),
    )

    stop = TimerAction(
        period=duration,
        actions=[Shutdown(reason='demo duration elapsed')],
        condition=IfCondition(PythonExpression([duration, ' > 0'])),
    )

    return LaunchDescription([*arguments, OpaqueFunction(function=check_numbers), aggregator,
                              sim_clock, controller, monitor, stop])
