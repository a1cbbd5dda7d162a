"""Launch Gazebo, its /clock bridge and the deadline monitor on simulation time.

    ros2 launch ros2_deadline_monitor gazebo.launch.py
    ros2 launch ros2_deadline_monitor gazebo.launch.py world:=shapes.sdf
    ros2 launch ros2_deadline_monitor gazebo.launch.py config:=$HOME/my_monitor.yaml

Needs ros_gz_sim and ros_gz_bridge (apt: ``ros-$ROS_DISTRO-ros-gz``), which this package
deliberately does not depend on: installing the monitor must not pull in Gazebo.

Gazebo publishes its clock on the Gazebo transport only; the bridge turns it into the ROS
``/clock`` that every ``use_sim_time`` node (the monitor included) follows. The monitor
measures the real time factor itself from ``/clock`` against the wall clock.

The /clock rate decides how often a sim-time timer can run: rcl fires a timer at most once per
/clock message and skips the periods in between, so a 100 Hz controller on sim time under a
10 Hz /clock runs 10 times a second while the RTF reads 1.0. Keep the /clock step at or below
the period of your fastest sim-time timer:

- Gazebo (gz sim, launched here) publishes its clock at every physics step, unthrottled: the
  step is the world's ``<physics><max_step_size>`` (0.001 s by default, 1 kHz at RTF 1), and
  the bridge forwards every message. A world with a larger step coarsens /clock with it.
- Gazebo Classic (gazebo_ros) throttles /clock to its ``publish_rate`` parameter, 10 Hz of
  real time by default. Raise it on the ``gazebo`` node, e.g. a params file
  ``gazebo: {ros__parameters: {publish_rate: 1000.0}}`` given as
  ``ros2 launch gazebo_ros gazebo.launch.py params_file:=clock.yaml``.

``sim_clock`` stands in for either: ``-p step_ms:=1.0 -p publish_rate_hz:=10.0`` reproduces
Gazebo Classic's default, and the monitor's /clock figures show the step it measures.

To show Gazebo's own RTF next to the measured one: Gazebo reports it as ``real_time_factor``
in ``gz.msgs.WorldStatistics`` on ``/world/<world name>/stats``, which ros_gz_bridge has no
ROS type for. Relay that field as ``std_msgs/msg/Float64`` (or ``Float32``) to a ROS topic,
e.g. ``/gazebo/real_time_factor``, and set the monitor parameter ``simulator_rtf_topic`` to
that topic in your config file.
"""

from ament_index_python.packages import get_package_prefix, PackageNotFoundError
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_context import LaunchContext
from launch.launch_description import LaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'ros2_deadline_monitor'
CLOCK_BRIDGE = '/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock'
"""parameter_bridge syntax: ROS topic @ ROS type [ Gazebo type; '[' means Gazebo -> ROS only."""
SIMULATOR_PACKAGES = ('ros_gz_sim', 'ros_gz_bridge')


def check_simulator(context: LaunchContext) -> list:
    """Refuse to start without Gazebo's ROS packages, in one line, before any node starts.

    Otherwise the monitor starts, then launch fails on ``FindPackageShare('ros_gz_sim')``
    with "package 'ros_gz_sim' not found, searching: [...]" and the monitor is left to stop
    on its own.
    """
    missing = []
    for package in SIMULATOR_PACKAGES:
        try:
            get_package_prefix(package)
        except PackageNotFoundError:
            missing.append(package)
    if missing:
        raise LookupError(f'gazebo.launch.py needs {" and ".join(missing)} (apt install '
                          'ros-jazzy-ros-gz); for a simulator stand-in without Gazebo: '
                          'ros2 launch ros2_deadline_monitor demo.launch.py')
    return []


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments, then Gazebo, the /clock bridge and the monitor."""
    arguments = [
        DeclareLaunchArgument(
            'world', default_value='empty.sdf',
            description='World for Gazebo to load and run: a file name on '
                        'GZ_SIM_RESOURCE_PATH (e.g. empty.sdf, shapes.sdf) or a path. Its '
                        '<physics><max_step_size> is the /clock step (gz sim publishes /clock '
                        'every physics step; 0.001 s by default): keep it at or below the '
                        'period of your fastest sim-time timer, which runs at most once per '
                        '/clock message.'),
        DeclareLaunchArgument(
            'config',
            default_value=PathJoinSubstitution([FindPackageShare(PACKAGE), 'config',
                                                'monitor.yaml']),
            description='YAML parameter file of the monitor (topics to watch, periods, '
                        'thresholds).'),
        DeclareLaunchArgument(
            'start_aggregator', default_value='false',
            choices=['true', 'false', 'True', 'False'],
            description='Also start diagnostic_aggregator for rqt_robot_monitor.'),
        # Declared here, before the included files declare it, so that --show-args offers
        # what this file does: the monitor always follows Gazebo's /clock.
        DeclareLaunchArgument(
            'use_sim_time', default_value='true', choices=['true', 'True'],
            description='Always true here: the monitor (and the aggregator) follow the '
                        '/clock bridged from Gazebo.'),
    ]

    gazebo = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare('ros_gz_sim'), 'launch',
                                  'gz_sim.launch.py'])),
        launch_arguments={
            # -r: start the simulation running instead of paused.
            'gz_args': ['-r ', LaunchConfiguration('world')],
            # Closing the Gazebo window ends the whole launch.
            'on_exit_shutdown': 'true',
        }.items(),
    )

    # Forwards every gz /clock message (one per physics step): the ROS /clock is as fine as
    # the world's max_step_size. Nothing here throttles it; Gazebo Classic's publish_rate
    # (10 Hz by default) has no counterpart in gz sim.
    clock_bridge = Node(
        package='ros_gz_bridge',
        executable='parameter_bridge',
        name='clock_bridge',
        arguments=[CLOCK_BRIDGE],
        output='screen',
    )

    monitor = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare(PACKAGE), 'launch', 'monitor.launch.py'])),
        launch_arguments={
            'config': LaunchConfiguration('config'),
            'use_sim_time': LaunchConfiguration('use_sim_time'),
            'start_aggregator': LaunchConfiguration('start_aggregator'),
        }.items(),
    )

    # The simulator's packages checked first, then the monitor's launch file: it refuses a
    # missing config file or aggregator before Gazebo starts.
    return LaunchDescription([*arguments, OpaqueFunction(function=check_simulator), monitor,
                              gazebo, clock_bridge])
