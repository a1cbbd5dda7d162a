"""Layouts from rosidl (live/rosidl_layouts.py), and stamps read from live raw bytes.

The rules resolved from rclpy classes must be the ones resolved offline from the same
definitions (one rule live and offline), and must read the stamps a real publisher in
another process wrote, from the bytes a real raw subscription received.
"""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys
import threading
import time
from typing import Any

from own_names import ns, ros_args  # test/plugins: the test's own names
import pytest
from rosbags.typesys import get_types_from_msg, get_typestore, Stores

from ros2_deadline_monitor.analysis.errors import CdrError
from ros2_deadline_monitor.analysis.stamp_field import (
    ArrayType,
    MessageLayout,
    OpaqueType,
    Primitive,
    resolve_stamp_field,
    SequenceType,
    StampFieldError,
    StringType,
)
from ros2_deadline_monitor.bag.layouts import layout_from_definitions
from ros2_deadline_monitor.live.rosidl_layouts import (
    message_layout,
    message_type_name,
    stamp_rule_for_class,
)

MSG_DIR = Path(__file__).resolve().parents[1] / 'interfaces' / 'deadline_monitor_test_msgs' / 'msg'
PKG = 'deadline_monitor_test_msgs/msg'
NS = 1_000_000_000

PUBLISHER = """
import json, sys, time
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from deadline_monitor_test_msgs.msg import TFMessageLike, TransformStampedLike
from std_msgs.msg import Header

topic, count, period = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rclpy.init()
node = rclpy.create_node('tf_like_publisher')
publisher = node.create_publisher(
    TFMessageLike, topic, QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE))
deadline = time.monotonic() + 20.0
while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.05)
sent = []

def on_timer():
    start = node.get_clock().now()  # the cycle start, stamped into the first transform
    k = len(sent)
    if k >= count:
        return
    transforms = [] if k % 10 == 9 else [
        TransformStampedLike(header=Header(stamp=start.to_msg(), frame_id='odom' * (k % 4)),
                             child_frame_id='base_link'),
        TransformStampedLike(header=Header(stamp=(start.to_msg()), frame_id='map' * (k % 3)),
                             child_frame_id='laser')]
    if transforms:
        transforms[1].header.stamp.nanosec = (transforms[1].header.stamp.nanosec + 1) % 10**9
    publisher.publish(TFMessageLike(transforms=transforms))
    sent.append(start.nanoseconds if transforms else None)

node.create_timer(period, on_timer)
while len(sent) < count:
    rclpy.spin_once(node, timeout_sec=0.1)
time.sleep(0.5)  # let the reliable writer deliver before the process goes away
print(json.dumps(sent), flush=True)
node.destroy_node()
rclpy.try_shutdown()
"""


def rosbags_definitions() -> Any:
    store = get_typestore(Stores.ROS2_JAZZY)
    types: dict[str, Any] = {}
    for path in sorted(MSG_DIR.glob('*.msg')):
        if path.stem != 'StampAfterWString':  # rosbags' .msg parser has no wstring
            types.update(get_types_from_msg(path.read_text(), f'{PKG}/{path.stem}'))
    store.register(types)
    return store.fielddefs.__getitem__


def test_layout_of_a_standard_class() -> None:
    from sensor_msgs.msg import Imu, TimeReference

    assert message_type_name(Imu) == 'sensor_msgs/msg/Imu'
    layout = message_layout(Imu)
    names = [name for name, _ in layout.fields]
    assert names[:3] == ['header', 'orientation', 'orientation_covariance']
    header = dict(layout.fields)['header']
    assert isinstance(header, MessageLayout) and header.type_name == 'std_msgs/msg/Header'
    assert dict(header.fields)['frame_id'] == StringType()
    assert dict(layout.fields)['orientation_covariance'] == ArrayType(Primitive('double', 8), 9)
    assert stamp_rule_for_class(Imu).leading
    assert stamp_rule_for_class(TimeReference, 'time_ref').offset is None


def test_layout_of_the_test_interfaces(test_msgs: Any) -> None:
    mixed = dict(message_layout(test_msgs.MixedLayout).fields)
    assert mixed['name'] == StringType(bound=8)
    assert isinstance(mixed['samples'], SequenceType) and mixed['samples'].bound is None
    assert dict(message_layout(test_msgs.StampAfterWString).fields)['label'] == StringType(
        wide=True)
    with pytest.raises(StampFieldError, match='wstring'):
        stamp_rule_for_class(test_msgs.StampAfterWString, 'stamp')
    with pytest.raises(StampFieldError, match="has no field 'header'"):
        stamp_rule_for_class(test_msgs.TFMessageLike)


@pytest.mark.parametrize(('type_name', 'path'), [
    ('TFMessageLike', 'transforms[0].header.stamp'),
    ('TFMessageLike', 'transforms[3].header.stamp'),
    ('StampAfterFixed', 'stamp'),
    ('StampAfterString', 'stamp'),
    ('MixedLayout', 'times[1]'),
    ('MixedLayout', 'headers[1].stamp'),
    ('MixedLayout', 'stamp'),
])
def test_live_and_offline_resolve_one_rule(test_msgs: Any, type_name: str, path: str) -> None:
    from rclpy.serialization import serialize_message
    from std_msgs.msg import Header

    live = stamp_rule_for_class(getattr(test_msgs, type_name), path)
    offline = resolve_stamp_field(
        layout_from_definitions(f'{PKG}/{type_name}', rosbags_definitions()), path)
    assert (live.type_name, live.offset, live.checks) == (
        offline.type_name, offline.offset, offline.checks)
    # And both read the same bytes alike.
    msg = getattr(test_msgs, type_name)()
    if type_name == 'TFMessageLike':
        msg.transforms = [test_msgs.TransformStampedLike(header=Header(frame_id='f' * k))
                          for k in range(4)]
        for k, transform in enumerate(msg.transforms):
            transform.header.stamp.sec = k
    if type_name == 'MixedLayout':
        msg.headers = [Header(frame_id='abc'), Header(frame_id='x')]
        msg.headers[1].stamp.sec = 7
    raw = serialize_message(msg)
    assert live.read(raw) == offline.read(raw)


def test_an_unimportable_nested_type_is_opaque() -> None:
    from rosidl_parser.definition import NamespacedType

    from ros2_deadline_monitor.live.rosidl_layouts import _field_type

    # What a generated class's SLOT_TYPES holds for a nested package that is not installed.
    thing = _field_type(NamespacedType(['not_installed_msgs', 'msg'], 'Thing'))
    assert isinstance(thing, OpaqueType) and 'cannot import' in thing.reason
    time = _field_type(NamespacedType(['builtin_interfaces', 'msg'], 'Time'))
    layout = MessageLayout('my_msgs/msg/Partial', (('stamp', time), ('thing', thing),
                                                   ('later', time)))
    assert resolve_stamp_field(layout, 'stamp').leading
    with pytest.raises(StampFieldError, match='thing \\(not_installed_msgs/msg/Thing\\) comes '
                                              'before it, and its type cannot be described'):
        resolve_stamp_field(layout, 'later')


def test_stamps_from_a_live_raw_subscription(test_msgs: Any, ros_context: Any) -> None:
    """A publisher process stamps each cycle's start in transforms[0] at 50 Hz."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    count = 50
    node = Node('raw_tf_like_reader', context=ros_context)
    received: list[bytes] = []
    lock = threading.Lock()

    def on_raw(raw: bytes) -> None:
        with lock:
            received.append(raw)

    node.create_subscription(test_msgs.TFMessageLike, ns('/tf_like'), on_raw,
                             QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE),
                             raw=True)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    publisher = subprocess.Popen([sys.executable, '-c', PUBLISHER, ns('/tf_like'), str(count),
                                  '0.02', *ros_args()], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60.0
        while publisher.poll() is None and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        for _ in range(10):
            executor.spin_once(timeout_sec=0.05)
        out, err = publisher.communicate(timeout=10)
    finally:
        if publisher.poll() is None:
            publisher.kill()
            publisher.communicate()
        executor.shutdown()
        node.destroy_node()
    assert publisher.returncode == 0, err
    sent = json.loads(out.strip().splitlines()[-1])
    assert len(received) == count == len(sent)

    first = stamp_rule_for_class(test_msgs.TFMessageLike, 'transforms[0].header.stamp')
    second = stamp_rule_for_class(test_msgs.TFMessageLike, 'transforms[1].header.stamp')
    assert first.offset == 8 and second.offset is None
    for raw, truth in zip(received, sent, strict=True):
        assert isinstance(raw, bytes)
        if truth is None:  # every 10th message has no transforms: malformed, never a value
            with pytest.raises(CdrError, match='transforms has 0 elements'):
                first.read(raw)
            continue
        assert first.read(raw) == truth
        assert second.read(raw) == truth + 1 - (NS if truth % NS == NS - 1 else 0)
