"""Launch Gazebo, its /clock bridge and the deadline monitor on simulation time.

    ros2 launch ros2_deadline_monitor gazebo.launch.py
    ros2 launch ros2_deadline_monitor gazebo.launch.py world:=shapes.sdf
    ros2 launch ros2_deadline_monitor gazebo.launch.py config:=$HOME/my_monitor.yaml

Needs ros_gz_sim and ros_gz_bridge (apt: ``ros-$ROS_DISTRO-ros-gz``), which this package
deliberately does not depend on: installing the monitor must not pull in Gazebo.

Gazebo publishes its clock on the Gazebo transport only; the bridge turns it into the ROS
``/clock`` that every ``use_sim_time`` node (the monitor included) follows. The monitor
measures the real time factor itself from ``/clock`` against the wall clock.

To show Gazebo's own RTF next to the measured one: Gazebo reports it as ``real_time_factor``
in ``gz.msgs.WorldStatistics`` on ``/world/<world name>/stats``, which ros_gz_bridge has no
ROS type for. Relay that field as ``std_msgs/msg/Float64`` (or ``Float32``) to a ROS topic,
e.g. ``/gazebo/real_time_factor``, and set the monitor parameter ``simulator_rtf_topic`` to
that topic in your config file.
"""

from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description import LaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'ros2_deadline_monitor'
CLOCK_BRIDGE = '/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock'
"""parameter_bridge syntax: ROS topic @ ROS type [ Gazebo type; '[' means Gazebo -> ROS only."""


def generate_launch_description() -> LaunchDescription:
    """Declare the arguments, then Gazebo, the /clock bridge and the monitor."""
    arguments = [
        DeclareLaunchArgument(
            'world', default_value='empty.sdf',
            description='World for Gazebo to load and run: a file name on '
                        'GZ_SIM_RESOURCE_PATH (e.g. empty.sdf, shapes.sdf) or a path.'),
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
            'use_sim_time': 'true',
            'start_aggregator': LaunchConfiguration('start_aggregator'),
        }.items(),
    )

    return LaunchDescription([*arguments, gazebo, clock_bridge, monitor])
