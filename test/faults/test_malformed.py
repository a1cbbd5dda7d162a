"""Raw messages the monitor cannot read: shorter than a stamp, or an unknown encapsulation.

Two levels, said plainly:

- live, over DDS: rclpy's ``Publisher.publish`` also takes ``bytes`` and sends them as the
  serialized message unchanged, so a ``std_msgs/Header`` publisher can put garbage on the
  wire under a type the monitor trusts. This runs the monitor's real subscription path (the
  batched take and, where the parameter exists, the per-message callback).
- unit, the callback ``subscriptions.make_callback`` builds, fed bytes and an info dict of
  the shape rclpy hands it (the keys taken from a real message), for byte strings the wire
  may not carry (an empty payload).

Every unreadable message is counted in ``malformed_total`` and still counted as a message
(it arrived: its interval is real); no exception leaves the callback.
"""

from __future__ import annotations

import struct

from own_names import ns  # test/plugins: the test's own names
import pytest

from ros2_deadline_monitor.live.parameter_declarations import GLOBAL_SPECS

HAS_TAKE_PERIOD = any(spec.name == 'take_period_s' for spec in GLOBAL_SPECS)
CDR_LE = b'\x00\x01\x00\x00'
BAD = [
    b'',
    b'\x00',
    b'\x00\x01\x00',                              # shorter than the encapsulation header
    CDR_LE + b'\x01\x00\x00',                     # header, then 3 of the 8 stamp bytes
    b'\x00\x03\x00\x00' + bytes(12),              # PL_CDR_LE: the stamp is not at offset 4
    b'\x07\x07\x00\x00' + bytes(12),              # first byte not 0: no such encoding
    b'\x00\x0c\x00\x00' + bytes(12),              # representation id beyond the known ones
]


def _good(sec: int, nanosec: int) -> bytes:
    """Return a serialized std_msgs/Header (CDR little endian) with an empty frame_id."""
    return CDR_LE + struct.pack('<iII', sec, nanosec, 1) + b'\x00'


@pytest.mark.parametrize('mode', [
    pytest.param({}, id='default'),
    pytest.param({'take_period_s': 0.0}, id='callback',
                 marks=pytest.mark.skipif(not HAS_TAKE_PERIOD, reason='one path only')),
])
def test_malformed_messages_on_the_wire_are_counted(
        ros_context, spin, observer, start_monitor, wait_for, capfd, mode):
    from rclpy.node import Node
    from rclpy.qos import QoSProfile
    from std_msgs.msg import Header

    start_monitor(topics=['raw'], topic__raw__name=ns('/raw'), topic__raw__stamp='start',
                  stats_period_s=0.2, **mode)
    node = Node('garbage_producer', context=ros_context)
    publisher = node.create_publisher(Header, ns('/raw'), QoSProfile(depth=100))
    spin(node)
    wait_for(publisher.get_subscription_count, what='the monitor to subscribe')
    wire_bad = [raw for raw in BAD if raw]  # an empty payload is not sent by the middleware
    sent = []
    for i in range(3):
        for raw in [_good(100 + i, 0), *wire_bad]:
            publisher.publish(raw)
            sent.append(raw)
    publisher.publish(_good(200, 0))
    sent.append(_good(200, 0))
    topic = wait_for(lambda: (t := observer.topic_stats('raw')) and t.messages_total == len(sent)
                     and t, what='every message counted')
    assert topic.malformed_total == 3 * len(wire_bad)
    assert topic.type == 'std_msgs/msg/Header'
    assert topic.start_source == 'header'  # the readable stamps were still used
    assert 'Traceback' not in capfd.readouterr().err


def test_the_callback_counts_what_it_cannot_read_and_raises_nothing(
        ros_context, spin, wait_for):
    from rclpy.node import Node
    from rclpy.qos import QoSProfile
    from std_msgs.msg import Header

    from ros2_deadline_monitor.analysis.cdr import read_stamp_ns
    from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
    from ros2_deadline_monitor.analysis.session import Session
    from ros2_deadline_monitor.live.subscriptions import make_callback

    # The info dict's real shape, from one message through a raw subscription.
    node = Node('info_probe', context=ros_context)
    infos = []
    node.create_subscription(Header, ns('/probe'), lambda raw, info: infos.append((raw, info)),
                             QoSProfile(depth=10), raw=True)
    publisher = node.create_publisher(Header, ns('/probe'), QoSProfile(depth=10))
    spin(node)
    wait_for(publisher.get_subscription_count, what='the probe subscription')
    publisher.publish(Header())
    raw, info = wait_for(lambda: infos and infos[0], what='one message with its info')
    assert isinstance(raw, bytes)

    session = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=0)
    session.configure({'raw': TopicConfig(name='raw', topic=ns('/raw'), period_ns=10_000_000,
                                          stamp='start')})
    callback = make_callback(session.recorder('raw', read_stamp_ns), 'received_timestamp')
    base = int(info['received_timestamp'])
    for i, payload in enumerate([raw, *BAD, _good(5, 0)]):
        callback(payload, {**info, 'received_timestamp': base + i * 10_000_000,
                           'publication_sequence_number': i + 1})
    report = session.snapshot(base + 10 ** 9, final=True).topics[0].report
    assert report.malformed_total == len(BAD)
    assert report.messages_total == len(BAD) + 2
    assert report.messages_lost_total == 0
