"""Launch MuJoCo in the loop: the simulator, a controller closing the loop on it, the monitor.

    ros2 launch ros2_deadline_monitor mujoco.launch.py
    ros2 launch ros2_deadline_monitor mujoco.launch.py stall_ms:=0.0 duration:=10
    ros2 launch ros2_deadline_monitor mujoco.launch.py clock_publish_hz:=10.0
    ros2 launch ros2_deadline_monitor mujoco.launch.py model_path:=/path/to/robot.xml

``mujoco_sim`` steps an MJCF model (by default the shipped upright pendulum) at its timestep,
paced to ``target_rtf``, and publishes /clock from the physics time, the joint states, an
IMU and /tf; ``demo_controller`` with ``control:=pd`` reads the joint state on a 100 Hz
sim-time timer, sends efforts back, and stalls ``stall_ms`` every ``stall_every``-th cycle;
the monitor watches the controller's stamped cycle topic next to /clock. Stop the launch
(Ctrl-C, or ``duration``) to see the monitor's summary and, in mujoco_sim's last log line, the
tracking error the misses cost. With ``start_aggregator:=true`` a ``diagnostic_aggregator``
groups the diagnostics for ``rqt_robot_monitor`` (aggregator.launch.py).

MuJoCo is the package's optional extra ``sim`` (``pip install mujoco``): without it,
mujoco_sim exits with one error line and the launch ends.
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
NUMBERS = {'target_rtf': float, 'clock_publish_hz': float, 'rate_hz': float,
           'stall_ms': float, 'stall_every': int, 'duration': float}
"""The numeric launch arguments and their types, checked before any node starts."""
MINIMUMS = {'duration': 0.0}
"""Arguments of this launch file itself with a floor (the nodes check their own ranges)."""


def check_numbers(context: LaunchContext) -> list:
    """Refuse a numeric argument that is not a (finite) number, naming it, before any node."""
    check_numeric_arguments(context.launch_configurations, NUMBERS, MINIMUMS)
    return []


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments, the three nodes and the optional stop timer."""
    target_rtf = ParameterValue(LaunchConfiguration('target_rtf'), value_type=float)
    rate_hz = ParameterValue(LaunchConfiguration('rate_hz'), value_type=float)
    duration = LaunchConfiguration('duration')

    arguments = [
        DeclareLaunchArgument(
            'model_path', default_value='',
            description='MJCF model mujoco_sim loads; empty for the shipped upright pendulum '
                        "(the controller's feedforward is tuned to it)."),
        DeclareLaunchArgument(
            'target_rtf', default_value='1.0',
            description='Real time factor mujoco_sim paces the physics to (0: as fast as it '
                        'can); the monitor rates the clock against it.'),
        DeclareLaunchArgument(
            'clock_publish_hz', default_value='0.0',
            description='/clock rate [Hz of sim time]; 0 publishes every physics step, 10 is '
                        "Gazebo Classic's default."),
        DeclareLaunchArgument(
            'rate_hz', default_value='100.0',
            description='Rate of the controller timer [Hz, sim time] (its deadline is one '
                        'period).'),
        DeclareLaunchArgument(
            'stall_ms', default_value='22.0',
            description='How long a stalled controller cycle takes [ms, wall clock]; 0.0 for '
                        'no stalls.'),
        DeclareLaunchArgument(
            'stall_every', default_value='50',
            description='Stall one controller cycle in this many (50: cycles 24, 74, ...); '
                        '0 never.'),
        DeclareLaunchArgument(
            'duration', default_value='0',
            description='Stop everything after this many seconds of wall time; 0 runs '
                        'until Ctrl-C.'),
        DeclareLaunchArgument(
            'start_aggregator', default_value='false', choices=BOOLEANS,
            description='Also start diagnostic_aggregator with '
                        'config/diagnostic_aggregator.yaml, for rqt_robot_monitor.'),
    ]

    simulator = Node(
        package=PACKAGE,
        executable='mujoco_sim',
        name='mujoco_sim',
        parameters=[{
            'model_path': LaunchConfiguration('model_path'),
            'target_rtf': target_rtf,
            'clock_publish_hz': ParameterValue(LaunchConfiguration('clock_publish_hz'),
                                               value_type=float),
            # Hold the physics until the monitor and the controller subscribe to /clock, so
            # the first cycles are not measured against a clock already running.
            'wait_for_subscribers': 2,
        }],
        output='screen',
        on_exit=stop_on_exit(Shutdown),
    )

    controller = Node(
        package=PACKAGE,
        executable='demo_controller',
        name='demo_controller',
        parameters=[{
            'use_sim_time': True,
            'control': 'pd',
            'rate_hz': rate_hz,
            'stall_ms': ParameterValue(LaunchConfiguration('stall_ms'), value_type=float),
            'stall_every': ParameterValue(LaunchConfiguration('stall_every'), value_type=int),
            'topic': CONTROL_TOPIC,
            # Start the timer once the monitor listens, /clock runs and a joint state came.
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
            'use_sim_time': True,
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
                          'use_sim_time': 'true'}.items(),
    )

    stop = TimerAction(
        period=duration,
        actions=[Shutdown(reason='duration elapsed')],
        condition=IfCondition(PythonExpression([duration, ' > 0'])),
    )

    return LaunchDescription([*arguments, OpaqueFunction(function=check_numbers), aggregator,
                              simulator, controller, monitor, stop])
