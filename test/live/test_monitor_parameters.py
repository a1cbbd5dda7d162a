"""Live parameter changes through the parameter service, as `ros2 param set` makes them."""

from __future__ import annotations

import math

from own_names import ns  # test/plugins: the test's own names


def _producer(ros_context, spin, topic: str = ''):
    from rclpy.node import Node
    from rclpy.qos import QoSProfile
    from std_msgs.msg import Header

    topic = topic or ns('/beat')
    node = Node(f'producer{topic.replace("/", "_")}', context=ros_context)
    publisher = node.create_publisher(Header, topic, QoSProfile(depth=10))
    node.create_timer(0.01, lambda: publisher.publish(
        Header(stamp=node.get_clock().now().to_msg())))
    spin(node)
    return node


def test_period_and_tolerance_change_live_and_bad_values_change_nothing(
        ros_context, spin, observer, start_monitor, wait_for, capfd):
    start_monitor(topics=['beat'], topic__beat__name=ns('/beat'), topic__beat__period_ms=10.0,
                  stats_period_s=0.2)
    _producer(ros_context, spin)
    wait_for(lambda: (t := observer.topic_stats('beat')) and t.messages_total > 0,
             what='messages on /beat')

    results = observer.set_parameters(topic__beat__period_ms=20.0,
                                      topic__beat__jitter_tolerance_ms=2.0)
    assert all(r.successful for r in results), [r.reason for r in results]
    wait_for(lambda: (t := observer.topic_stats('beat')) and t.period_ms == 20.0
             and t.jitter_tolerance_ms == 2.0, what='the new period in the stats')
    # The log says what changed (the parameter client sets one parameter at a time).
    log = capfd.readouterr().err
    assert 'beat: settings changed: topic.beat.period_ms' in log
    assert 'beat: settings changed: topic.beat.jitter_tolerance_ms' in log

    # An integer on a double parameter is what `ros2 param set ... 25` sends.
    (result,) = observer.set_parameters(topic__beat__period_ms=25)
    assert result.successful, result.reason
    assert observer.get_parameter('topic.beat.period_ms') == 25.0
    wait_for(lambda: (t := observer.topic_stats('beat')) and t.period_ms == 25.0,
             what='the integer period in the stats')

    rejected = {
        'topic__beat__period_ms': -1.0,
        'topic__beat__deadline_ms': math.nan,
        'topic__beat__rule': 'sometimes',
        'topic__beat__rate_hz': 50.0,
        'window_cycles': 1,
        'rtf_error_fraction': 0.99,
    }
    for name, value in rejected.items():
        (result,) = observer.set_parameters(**{name: value})
        assert not result.successful, name
        assert result.reason, name
    assert observer.get_parameter('topic.beat.period_ms') == 25.0
    assert observer.get_parameter('topic.beat.rule') == 'auto'

    before = observer.topic_stats('beat').messages_total
    wait_for(lambda: (t := observer.topic_stats('beat')) and t.messages_total > before
             and t.period_ms == 25.0 and t.level != 2, what='monitoring to go on unchanged')


def test_topics_are_added_and_removed_at_runtime(ros_context, spin, observer, start_monitor,
                                                 wait_for):
    start_monitor(topics=['beat'], topic__beat__name=ns('/beat'), stats_period_s=0.2)
    _producer(ros_context, spin)
    _producer(ros_context, spin, ns('/other'))

    def names():
        stats = observer.latest_stats()
        return sorted(t.name for t in stats.topics) if stats else []

    wait_for(lambda: names() == ['beat'], what='one topic')
    (result,) = observer.set_parameters(topics=['beat', 'other'])
    assert result.successful, result.reason
    assert observer.get_parameter('topic.other.name') == 'other'
    wait_for(lambda: (t := observer.topic_stats('other')) and t.messages_total > 0,
             what='the added topic to be monitored')
    assert observer.topic_stats('other').topic == ns('/other')

    (result,) = observer.set_parameters(topic__other__name=ns('/beat'))
    assert not result.successful
    assert 'already monitored' in result.reason
    (result,) = observer.set_parameters(topics=['beat', 'beat'])
    assert not result.successful

    assert 'topic.beat.period_ms' in observer.list_parameters('topic.beat')
    (result,) = observer.set_parameters(topics=['other'])
    assert result.successful, result.reason
    wait_for(lambda: names() == ['other'], what='the removed topic to disappear')
    # Its parameters go with it (`ros2 param dump` shows what is in force); the other stays.
    assert observer.list_parameters('topic.beat') == []
    assert 'topic.other.name' in observer.list_parameters('topic.other')
    # A set on its old parameters says so (was rclpy's "Invalid access to undeclared
    # parameter(s): []"), a setting and a limit alike; an unknown topic keeps rclpy's answer.
    for name in ('topic__beat__period_ms', 'topic__beat__expect__max_misses'):
        (result,) = observer.set_parameters(**{name: 10.0})
        assert not result.successful
        assert "topic 'beat' is no longer monitored (removed from topics at " in result.reason, (
            result.reason)
    (result,) = observer.set_parameters(topic__never__period_ms=10.0)
    assert not result.successful and 'no longer monitored' not in result.reason
    # Listed again, it is declared anew: the values given at start-up apply again.
    (result,) = observer.set_parameters(topics=['other', 'beat'])
    assert result.successful, result.reason
    assert observer.get_parameter('topic.beat.name') == ns('/beat')


def test_stamp_field_with_bad_syntax_is_rejected_with_the_reason(
        ros_context, spin, observer, start_monitor, wait_for):
    start_monitor(topics=['beat'], topic__beat__name=ns('/beat'), stats_period_s=0.2)
    _producer(ros_context, spin)
    wait_for(lambda: (t := observer.topic_stats('beat')) and t.messages_total > 0,
             what='messages on /beat')
    for bad in ('header..stamp', 'transforms[x].header.stamp', ''):
        (result,) = observer.set_parameters(topic__beat__stamp_field=bad)
        assert not result.successful, bad
        assert 'topic.beat.stamp_field' in result.reason, result.reason
    assert observer.get_parameter('topic.beat.stamp_field') == 'header.stamp'
    (result,) = observer.set_parameters(topic__beat__stamp_field='header.stamp')
    assert result.successful, result.reason


LIBRARY_PARAMETER = 'diagnostic_updater.period'


def test_a_library_parameter_on_the_monitor_node_is_left_to_the_library(
        ros_context, spin, observer, wait_for, capfd):
    """diagnostic_updater declares its parameter while the monitor is being built.

    The real updater made every start fail: its declaration reached the monitor's callbacks,
    which applied it to a node not finished yet. Without the updater installed, the node here
    declares it where the updater does (where the diagnostics output creates its publisher,
    after the callbacks); with it, the updater does.
    """
    from rclpy.parameter import Parameter

    from ros2_deadline_monitor.live.monitor_node import MonitorNode
    from ros2_deadline_monitor.outputs.diagnostics import DIAGNOSTICS_TOPIC
    from ros2_deadline_monitor.outputs.optional import diagnostic_updater

    class WithLibrary(MonitorNode):
        def create_publisher(self, msg_type, topic, *args, **kwargs):
            publisher = super().create_publisher(msg_type, topic, *args, **kwargs)
            if topic == DIAGNOSTICS_TOPIC and diagnostic_updater is None:
                self.declare_parameter(LIBRARY_PARAMETER, 1.0)  # as Updater.__init__ does
            return publisher

    node = WithLibrary(context=ros_context, parameter_overrides=[
        Parameter('topics', value=['beat']), Parameter('topic.beat.name', value=ns('/beat')),
        Parameter('stats_period_s', value=0.2)])
    spin(node, destroy=True)
    _producer(ros_context, spin)
    wait_for(lambda: (t := observer.topic_stats('beat')) and t.messages_total > 0,
             what='messages on /beat')

    (result,) = observer.set_parameters(diagnostic_updater__period=2.0)
    assert result.successful, result.reason
    assert observer.get_parameter(LIBRARY_PARAMETER) == 2.0
    (result,) = observer.set_parameters(topic__beat__period_ms=-1.0)  # its own still checked
    assert not result.successful
    before = observer.topic_stats('beat').messages_total
    wait_for(lambda: (t := observer.topic_stats('beat')) and t.messages_total > before,
             what='monitoring to go on')
    log = capfd.readouterr().err
    assert 'Traceback' not in log
    assert 'settings changed' not in log
