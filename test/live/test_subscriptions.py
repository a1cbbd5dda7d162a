"""Raw subscriptions: stamps read from the CDR bytes equal the deserialized ones."""

from __future__ import annotations

import threading

from own_names import ns  # test/plugins: the test's own names
import pytest


def _stamped_messages():
    from geometry_msgs.msg import Pose, PoseArray, PoseStamped
    from sensor_msgs.msg import Imu
    from std_msgs.msg import Header

    def header(i: int) -> Header:
        return Header(frame_id=f'frame_{i}' * (i % 3))

    imu = Imu(header=header(2))
    imu.linear_acceleration.z = 9.81
    poses = PoseArray(header=header(3), poses=[Pose() for _ in range(5)])
    return [
        ('std_msgs/msg/Header', header(1), lambda m: m),
        ('sensor_msgs/msg/Imu', imu, lambda m: m.header),
        ('geometry_msgs/msg/PoseStamped', PoseStamped(header=header(4)), lambda m: m.header),
        ('geometry_msgs/msg/PoseArray', poses, lambda m: m.header),
    ]


@pytest.mark.parametrize(('type_name', 'message', 'header_of'), _stamped_messages(),
                         ids=lambda v: v if isinstance(v, str) else '')
def test_raw_stamp_equals_deserialized_stamp(ros_context, spin, wait_for, type_name, message,
                                             header_of):
    from rclpy.node import Node
    from rclpy.qos import QoSProfile
    from rclpy.serialization import deserialize_message

    from ros2_deadline_monitor.analysis.cdr import read_stamp_ns
    from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
    from ros2_deadline_monitor.analysis.session import Session
    from ros2_deadline_monitor.live.message_types import has_leading_stamp, import_message
    from ros2_deadline_monitor.live.subscriptions import make_callback

    msg_class = import_message(type_name)
    assert type(message) is msg_class
    assert has_leading_stamp(msg_class, type_name)
    node = Node('stamp_test', context=ros_context)
    session = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=0)
    session.configure({'t': TopicConfig(name='t', topic=ns('/stamped'), period_ns=10_000_000,
                                        stamp='start')})
    record = make_callback(session.recorder('t', read_stamp_ns), 'received_timestamp')
    received = []
    lock = threading.Lock()

    def on_raw(raw: bytes, info: dict) -> None:
        record(raw, info)
        with lock:
            received.append(raw)

    node.create_subscription(msg_class, ns('/stamped'), on_raw, QoSProfile(depth=50), raw=True)
    publisher = node.create_publisher(msg_class, ns('/stamped'), QoSProfile(depth=50))
    spin(node)
    wait_for(lambda: publisher.get_subscription_count() >= 1, what='the subscription to match')
    stamps = [(-5, 999_999_999), (0, 1), (1_700_000_000, 123_456_789), (2**31 - 1, 0)]
    for sec, nanosec in stamps:
        header_of(message).stamp.sec, header_of(message).stamp.nanosec = sec, nanosec
        publisher.publish(message)
    wait_for(lambda: len(received) == len(stamps), what='all messages')

    for raw, (sec, nanosec) in zip(received, stamps, strict=True):
        decoded = header_of(deserialize_message(raw, msg_class))
        assert (decoded.stamp.sec, decoded.stamp.nanosec) == (sec, nanosec)
        assert read_stamp_ns(raw) == decoded.stamp.sec * 1_000_000_000 + decoded.stamp.nanosec
    report = session.snapshot(0, final=True).topics[0].report
    assert report.messages_total == len(stamps)
    assert report.malformed_total == 0
    assert report.start_source == 'header'


def test_stamp_start_on_a_headerless_type_is_refused_with_the_reason(
        ros_context, spin, observer, start_monitor, wait_for):
    from rclpy.node import Node
    from rclpy.qos import QoSProfile
    from std_msgs.msg import Float64, Header

    start_monitor(topics=['value', 'header'], topic__value__name=ns('/value'),
                  topic__value__stamp='start', topic__header__name=ns('/header'),
                  topic__header__stamp='start')
    node = Node('producer', context=ros_context)
    value_pub = node.create_publisher(Float64, ns('/value'), QoSProfile(depth=10))
    header_pub = node.create_publisher(Header, ns('/header'), QoSProfile(depth=10))

    def publish() -> None:
        value_pub.publish(Float64(data=1.0))
        header_pub.publish(Header(stamp=node.get_clock().now().to_msg()))

    node.create_timer(0.02, publish)
    spin(node)

    def both_seen():
        value, header = observer.topic_stats('value'), observer.topic_stats('header')
        return value and header and value.level == 2 and header.messages_total > 0 and (
            value, header)

    # A cycle start that cannot be read is refused (as the bag analyzer does), not guessed
    # from arrivals: the figures would mean something else than configured.
    value, header = wait_for(both_seen, what='the headerless topic refused, the other counted')
    assert value.type == 'std_msgs/msg/Float64'
    assert 'stamp_field header.stamp of std_msgs/msg/Float64 cannot be read' in value.status
    assert value.messages_total == 0
    assert header.type == 'std_msgs/msg/Header'
    assert header.start_source == 'header'
    assert header.malformed_total == 0


def test_topics_waiting_for_a_publisher_share_one_line_naming_the_first_few():
    from ros2_deadline_monitor.live.subscriptions import waiting_line, WAITING_NAMES

    assert waiting_line([('imu', '/imu/data')]) == 'imu: waiting for a publisher on /imu/data'
    two = waiting_line([('a', '/a'), ('b', '/b')])
    assert two == 'waiting for a publisher on 2 topics: /a, /b'
    many = [(f't{i}', f'/t{i}') for i in range(WAITING_NAMES + 3)]
    line = waiting_line(many)
    assert line.startswith(f'waiting for a publisher on {WAITING_NAMES + 3} topics: /t0, /t1, ')
    assert line.endswith(f'/t{WAITING_NAMES - 1} and 3 more')
    assert f'/t{WAITING_NAMES},' not in line and not line.endswith(f'/t{WAITING_NAMES}')
    assert waiting_line(many[:WAITING_NAMES]).endswith(f'/t{WAITING_NAMES - 1}')


def test_subscriptions_started_together_are_said_in_a_line_each_or_one_for_many():
    from ros2_deadline_monitor.live.subscriptions import monitoring_lines, WAITING_NAMES

    started = [(f'/t{i}', f't{i}: monitoring /t{i} (std_msgs/msg/Header, reliable, stamp '
                          'header.stamp)') for i in range(WAITING_NAMES + 3)]
    assert monitoring_lines([]) == []
    assert monitoring_lines(started[:WAITING_NAMES]) == [
        line for _, line in started[:WAITING_NAMES]]
    (line,) = monitoring_lines(started)
    assert line.startswith(f'monitoring {WAITING_NAMES + 3} topics: /t0, /t1, ')
    assert f'/t{WAITING_NAMES - 1} and 3 more' in line
    assert f'/t{WAITING_NAMES},' not in line
