"""Stamp rules from a bag's own message definitions (bag/layouts.py) and ``--stamp-field``.

Types laid out like ``tf2_msgs/TFMessage`` come from the project's test interfaces, parsed
from their ``.msg`` files by rosbags (no build needed: the bag stores the definitions).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rosbags.typesys import get_types_from_msg

from ros2_deadline_monitor.analysis.errors import BagError, ConfigError
from ros2_deadline_monitor.analysis.stamp_field import (
    MessageLayout,
    OpaqueType,
    resolve_stamp_field,
    StampFieldError,
)
from ros2_deadline_monitor.bag.analyze import main
from ros2_deadline_monitor.bag.layouts import bag_stamp_rule, layout_from_definitions
from ros2_deadline_monitor.bag.plan import topic_stamp_rule
from ros2_deadline_monitor.bag.reader import BagSource

MSG_DIR = Path(__file__).resolve().parents[1] / 'interfaces' / 'deadline_monitor_test_msgs' / 'msg'
PKG = 'deadline_monitor_test_msgs/msg'
TF_LIKE = f'{PKG}/TFMessageLike'
MS = 1_000_000
NS = 1_000_000_000
T0 = 1_700_000_000_000_000_000


@pytest.fixture
def store(bags: Any) -> Any:
    """Return the Jazzy typestore with the test interfaces registered from their .msg files."""
    store = bags.typestore()
    types: dict[str, Any] = {}
    for path in sorted(MSG_DIR.glob('*.msg')):
        if path.stem != 'StampAfterWString':  # rosbags' .msg parser has no wstring
            types.update(get_types_from_msg(path.read_text(), f'{PKG}/{path.stem}'))
    store.register(types)
    return store


def tf_like(store: Any, stamps: list[int], frame: str = 'odom') -> Any:
    t = store.types
    transform = t['geometry_msgs/msg/Transform'](
        translation=t['geometry_msgs/msg/Vector3'](x=0.0, y=0.0, z=0.0),
        rotation=t['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0))
    transforms = []
    for i, ns in enumerate(stamps):
        sec, nanosec = divmod(ns, NS)
        transforms.append(t[f'{PKG}/TransformStampedLike'](
            header=t['std_msgs/msg/Header'](
                stamp=t['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec),
                frame_id=frame * (i + 1)),
            child_frame_id=f'child{i}', transform=transform))
    return t[TF_LIKE](transforms=transforms)


def definition(store: Any):
    return store.fielddefs.__getitem__


def test_layouts_follow_the_definitions(store: Any) -> None:
    layout = layout_from_definitions(TF_LIKE, definition(store))
    assert isinstance(layout, MessageLayout) and layout.type_name == TF_LIKE
    rule = resolve_stamp_field(layout, 'transforms[0].header.stamp')
    assert (rule.offset, rule.checks) == (8, ((4, 0),))
    fixed = resolve_stamp_field(layout_from_definitions(f'{PKG}/StampAfterFixed',
                                                        definition(store)), 'stamp')
    assert fixed.offset == 24
    imu = resolve_stamp_field(layout_from_definitions('sensor_msgs/msg/Imu', definition(store)))
    assert imu.leading


@pytest.mark.parametrize('little_endian', [True, False])
def test_rules_read_rosbags_bytes(store: Any, little_endian: bool) -> None:
    raw = bytes(store.serialize_cdr(tf_like(store, [T0 + 7, T0 + 9 * MS]), TF_LIKE,
                                    little_endian=little_endian))
    layout = layout_from_definitions(TF_LIKE, definition(store))
    assert resolve_stamp_field(layout, 'transforms[0].header.stamp').read(raw) == T0 + 7
    assert resolve_stamp_field(layout, 'transforms[1].header.stamp').read(raw) == T0 + 9 * MS

    t = store.types
    ref = t['sensor_msgs/msg/TimeReference'](
        header=t['std_msgs/msg/Header'](stamp=t['builtin_interfaces/msg/Time'](sec=1, nanosec=2),
                                        frame_id='gps_antenna'),
        time_ref=t['builtin_interfaces/msg/Time'](sec=3, nanosec=4), source='gps')
    raw = bytes(store.serialize_cdr(ref, ref.__msgtype__, little_endian=little_endian))
    layout = layout_from_definitions(ref.__msgtype__, definition(store))
    assert resolve_stamp_field(layout, 'time_ref').read(raw) == 3 * NS + 4
    assert resolve_stamp_field(layout).read(raw) == 1 * NS + 2


def test_bounded_strings_and_sequences_keep_their_bounds(store: Any) -> None:
    layout = layout_from_definitions(f'{PKG}/MixedLayout', definition(store))
    kinds = dict(layout.fields)
    assert kinds['name'].bound == 8
    assert kinds['samples'].bound is None
    assert kinds['vector'].length == 3


def test_unknown_types(store: Any) -> None:
    with pytest.raises(StampFieldError, match='unknown message type nope/msg/Nope'):
        layout_from_definitions('nope/msg/Nope', definition(store))
    fields = {'x/msg/Outer': ([], [
        ('stamp', (store.fielddefs['std_msgs/msg/Header'][1][0][1])),
        ('inner', (2, 'x/msg/Missing')),
        ('later', (2, 'builtin_interfaces/msg/Time'))])}
    fields.update(store.fielddefs)
    layout = layout_from_definitions('x/msg/Outer', fields.__getitem__)
    assert isinstance(dict(layout.fields)['inner'], OpaqueType)
    assert resolve_stamp_field(layout, 'stamp').leading  # before the unknown type: fine
    with pytest.raises(StampFieldError, match='inner \\(x/msg/Missing\\) comes before it, '
                                              'and it has no definition'):
        resolve_stamp_field(layout, 'later')


def write_tf_bag(bags: Any, store: Any, path: Path, storage: str, n: int = 50,
                 empty_every: int = 0) -> list[int]:
    """Write a 50 Hz TFMessageLike topic whose first transform is stamped with the start."""
    stamps = [T0 + k * 20 * MS for k in range(n)]
    messages = []
    for k, ns in enumerate(stamps):
        stamped = [] if empty_every and k % empty_every == empty_every - 1 else [ns, ns + 1]
        raw = bytes(store.serialize_cdr(tf_like(store, stamped), TF_LIKE))
        messages.append(('/tf_like', ns + 2 * MS, raw))
    bags.write(path, storage, {'/tf_like': TF_LIKE}, messages, store)
    return stamps


def test_a_bag_defines_the_layout(bags: Any, store: Any, storage: str, tmp_path: Path) -> None:
    stamps = write_tf_bag(bags, store, tmp_path / 'bag', storage, empty_every=10)
    with BagSource(tmp_path / 'bag') as bag:
        rule = bag_stamp_rule(bag, TF_LIKE, 'transforms[0].header.stamp')
        read = []
        for _, _, raw in bag.messages(bag.topics['/tf_like'].connections):
            try:
                read.append(rule.read(raw))
            except Exception as err:  # noqa: BLE001 - the empty ones must be CdrErrors
                read.append(type(err).__name__)
    expected = [('CdrError' if k % 10 == 9 else ns) for k, ns in enumerate(stamps)]
    assert read == expected
    with BagSource(tmp_path / 'bag') as bag, pytest.raises(BagError, match='unknown message'):
        bag_stamp_rule(bag, 'nope/msg/Nope')


def test_plan_resolves_the_configured_stamp_field(bags: Any, store: Any,
                                                  tmp_path: Path) -> None:
    from ros2_deadline_monitor.analysis.config import TopicConfig

    write_tf_bag(bags, store, tmp_path / 'bag', 'mcap')
    with BagSource(tmp_path / 'bag') as bag:
        topic = bag.topics['/tf_like']
        config = TopicConfig(name='tf', topic='/tf_like',
                             stamp_field='transforms[0].header.stamp')
        rule = topic_stamp_rule(bag, config, topic)
        assert rule is not None and rule.offset == 8
        # The default path on a type without a header: no stamp, and no error...
        assert topic_stamp_rule(bag, TopicConfig(name='tf', topic='/tf_like'), topic) is None
        # ...unless the stamp is needed.
        with pytest.raises(ConfigError, match='has no header stamp'):
            topic_stamp_rule(bag, TopicConfig(name='tf', topic='/tf_like', stamp='start'),
                             topic)
        with pytest.raises(ConfigError, match="stamp_field: .*has no field 'nope'"):
            topic_stamp_rule(bag, config.with_changes(stamp_field='nope'), topic)


def test_stamp_field_flag_syntax_is_a_usage_error(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    assert main([str(tmp_path), '--stamp-field', 'transforms[x].stamp']) == 2
    assert 'is not a field path' in capsys.readouterr().err


def test_stamp_field_flag_reaches_the_plan(bags: Any, store: Any, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    write_tf_bag(bags, store, tmp_path / 'bag', 'mcap')
    assert main([str(tmp_path / 'bag'), '--no-progress', '--stamp-field', 'nope']) == 1
    err = capsys.readouterr().err
    assert 'stamp_field: ' in err and "has no field 'nope'" in err
    # Resolved from the bag's definitions and read by the replay (the plan carries the rule).
    assert main([str(tmp_path / 'bag'), '--no-progress', '--stamp', 'start',
                 '--stamp-field', 'transforms[0].header.stamp']) == 0


def test_the_replay_reads_a_nested_stamp(bags: Any, store: Any, storage: str,
                                         tmp_path: Path, topic_views) -> None:
    from ros2_deadline_monitor.bag.plan import build_plan, Overrides
    from ros2_deadline_monitor.bag.replay import BagAnalysis

    # Every 10th message has no transforms: malformed for the rule, never a wrong stamp.
    stamps = write_tf_bag(bags, store, tmp_path / 'bag', storage, n=200, empty_every=10)
    with BagSource(tmp_path / 'bag') as bag:
        plan, _ = build_plan(bag, None, Overrides(
            stamp='start', stamp_field='transforms[0].header.stamp', clock='wall',
            period_ns=20 * MS))
        assert plan.topics[0].stamp_rule is not None
        assert plan.topics[0].stamp_rule.offset == 8
        (topic,) = topic_views(BagAnalysis(bag, plan).run())
    assert topic.messages_total == len(stamps) and topic.malformed_total == 20
    assert topic.start_source == 'header'
    # Each empty message (but the last) was a cycle of the producer without a readable
    # stamp: it took its slot, so the hole it leaves in the stamps is no miss, no skip.
    assert topic.cycles == 180
    assert topic.deadline_misses_total == topic.skipped_periods_total == 0
    assert topic.foreign_stamps_total == 0 and topic.outages_total == 0
