"""The /diagnostics output: what rqt_robot_monitor and diagnostic_aggregator expect.

The fallback path (the monitor publishes the array itself) always runs. The
diagnostic_updater path runs where that package is importable (a ROS install, or
PYTHONPATH pointing at its source); both must give the same array.
"""

from __future__ import annotations

import re
import time

from own_names import ns  # test/plugins: the test's own names
import pytest

from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.outputs import diagnostics
from ros2_deadline_monitor.outputs.optional import diagnostic_updater

UNIT = re.compile(r'\((ms|s|Hz|%|bytes|bytes/s|MB|p99/p50|s since start|s sim time)\)$')
COUNTS = {'messages', 'deadline misses', 'skipped periods', 'messages lost', 'intervals wall',
          'intervals sim', 'messages total', 'deadline misses total', 'skipped periods total',
          'messages lost total', 'malformed total', 'QoS deadline events total',
          'sim resets total', 'sim resets', 'monitor minor faults', 'cgroup periods',
          'cgroup throttled periods', 'reader queue depth', 'queue overflows total',
          'clock publishers', 'foreign stamps total', 'outages total', 'producer runs total',
          'unattributed total', 'producers', 'sim jumps', 'sim jumps total',
          'intervals across loss total', 'stamps back total', 'shared stamps total',
          'age unknown total', 'unlearned total', 'messages lost by monitor total',
          'unmonitored gaps total', 'unmonitored messages total'}
WORDS = {'topic', 'type', 'publishers', 'rule', 'start source', 'arrival timestamp',
         'timer clock', 'period learned', 'RTF', 'RTF total', 'RTF target', 'simulator RTF',
         'clock topic', 'paused', 'cgroup cpu.stat', 'RTF min bin', 'RTF max bin', 'receive',
         'kind', 'period source', 'notes'}


def test_statuses_of_a_snapshot_name_topic_clock_and_host(snapshots):
    invalid = snapshots.topic('bad/id', topic='', report=None, level=Level.ERROR,
                              reason='invalid configuration: period_ms: must be > 0')
    snap = snapshots.snapshot(topics=[snapshots.topic(), invalid])
    statuses = diagnostics.statuses(snap, 'hw-1')
    assert [s.name for s in statuses] == ['topic imu', 'topic bad_id', 'clock', 'host']
    assert [s.level for s in statuses] == [bytes([1]), bytes([2]), bytes([0]), bytes([1])]
    assert statuses[0].message == snap.topics[0].reason
    assert statuses[1].message.startswith('invalid configuration') and not statuses[1].values
    assert {s.hardware_id for s in statuses} == {'hw-1'}
    assert statuses[2].message == 'RTF 1.000'


def test_every_key_names_its_unit_or_is_a_count_or_a_word(snapshots):
    snap = snapshots.snapshot()
    for status in diagnostics.statuses(snap):
        for kv in status.values:
            key, value = kv.key, kv.value
            assert isinstance(value, str)
            assert (UNIT.search(key) or key in COUNTS or key in WORDS
                    or key.startswith('intervals ')), key
            if key in COUNTS and value != 'n/a':
                assert value.isdigit() or value.startswith('unknown'), (key, value)
    values = {kv.key: kv.value for kv in diagnostics.statuses(snap)[0].values}
    assert values['max interval wall (ms)'] == '22.500'
    assert values['deadline misses'] == '20'
    assert values['skipped periods'] == '10'
    assert values['since last message (s)'] == '0.1'
    assert values['RTF'] == '1.000'
    host = {kv.key: kv.value for kv in diagnostics.statuses(snap)[-1].values}
    assert host['stats timer late (ms)'] == '2.000'


def test_the_inspector_starts_with_misses_skips_max_interval_and_rtf(snapshots):
    topic = diagnostics.statuses(snapshots.snapshot())[0]
    assert [kv.key for kv in topic.values[:5]] == [
        'deadline misses', 'skipped periods', 'max interval wall (ms)', 'max interval sim (ms)',
        'RTF']


def test_the_inspector_says_how_a_topic_is_judged_next_to_the_headline(snapshots):
    # A second monitor on another clock judges by another rule: what says so comes early.
    topic = diagnostics.statuses(snapshots.snapshot())[0]
    keys = [kv.key for kv in topic.values]
    for key in ('rule', 'timer clock', 'period (ms)', 'deadline (ms)', 'start source'):
        assert keys.index(key) < 12, (key, keys)
    assert sorted(keys) == sorted(dict.fromkeys(keys))  # each key once


def _statuses(hardware_id: str):
    return [
        diagnostics.make_status('topic imu', Level.WARN, '20 misses', hardware_id,
                                [('deadline misses', '20')]),
        diagnostics.make_status('clock', Level.OK, 'RTF 1.000', hardware_id, [('RTF', '1.000')]),
    ]


@pytest.mark.parametrize('use_updater', [
    False,
    pytest.param(True, marks=pytest.mark.skipif(diagnostic_updater is None,
                                                reason='diagnostic_updater not installed')),
], ids=['fallback', 'diagnostic_updater'])
def test_both_outputs_publish_the_same_array(ros_context, spin, observer, wait_for,
                                             use_updater):
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    # A fast updater period and sim time with no /clock: if the updater's own timer were
    # alive it would publish on its own schedule (or never); only force_update may publish.
    node = Node('deadline_monitor', context=ros_context, parameter_overrides=[
        Parameter('diagnostic_updater.period', value=0.05),
        Parameter('use_sim_time', value=True)])
    output = diagnostics.DiagnosticsOutput(node, 'hw-1', use_updater=use_updater)
    assert output.uses_updater is use_updater
    assert not list(node.timers)  # the updater's own would publish on the node's clock
    spin(node)

    def arrays_with(name: str):
        with observer.lock:
            return [a for a in observer.arrays if any(s.name == name for s in a.status)]

    published_at = time.time()
    output.publish(_statuses('ignored'))
    first = wait_for(lambda: arrays_with('deadline_monitor: clock'), what='the first array')[-1]
    output.set_hardware_id('hw-2')
    output.publish(_statuses('ignored')[1:], wall_ns=1_234_000_000_567)
    second = wait_for(
        lambda: [a for a in arrays_with('deadline_monitor: clock')
                 if a.status[0].hardware_id == 'hw-2'], what='the second array')[-1]

    assert [s.name for s in first.status] == ['deadline_monitor: topic imu',
                                              'deadline_monitor: clock']
    assert [s.level for s in first.status] == [bytes([1]), bytes([0])]
    assert {s.hardware_id for s in first.status} == {'hw-1'}
    assert [(kv.key, kv.value) for kv in first.status[0].values] == [('deadline misses', '20')]
    assert first.status[0].message == '20 misses'
    assert [s.name for s in second.status] == ['deadline_monitor: clock']
    # Stamped on the wall (system) clock, as ~/stats: not the node's sim time (0 here, no
    # /clock), and the report's own time when given.
    first_s = first.header.stamp.sec + first.header.stamp.nanosec / 1e9
    assert abs(first_s - published_at) < 600.0, first.header.stamp
    assert (second.header.stamp.sec, second.header.stamp.nanosec) == (1234, 567)
    with observer.lock:
        ours = [a for a in observer.arrays
                if any(s.name.startswith('deadline_monitor: ') for s in a.status)]
    # Exactly the two arrays published: nothing on the updater's timer, and no announcement
    # of a task (an OK 'Node starting up' before a topic's real level).
    assert ours == [first, second]


@pytest.mark.skipif(diagnostic_updater is None, reason='diagnostic_updater not installed')
def test_the_updater_names_the_statuses(ros_context, spin, observer, wait_for):
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    # /robot inside the test's namespace: a node's own __ns rule wins over the context's.
    node = Node('deadline_monitor', context=ros_context,
                cli_args=['--ros-args', '-r', f'__ns:={ns("/robot")}'],
                parameter_overrides=[Parameter('diagnostic_updater.use_fqn', value=True)])
    output = diagnostics.DiagnosticsOutput(node, 'hw-1', use_updater=True)
    spin(node)
    output.publish(_statuses('ignored'))

    def names():
        with observer.lock:
            return [[s.name for s in a.status] for a in observer.arrays
                    if any('deadline_monitor: ' in s.name for s in a.status)]

    # The updater's own join of namespace and name, as its tasks would have been named.
    assert wait_for(names, what='the array') == [[ns('/robot/deadline_monitor: topic imu'),
                                                  ns('/robot/deadline_monitor: clock')]]


@pytest.mark.parametrize('wanted', [False, True], ids=['direct', 'updater_if_installed'])
def test_the_monitor_publishes_through_the_updater_when_installed_and_wanted(
        start_monitor, capfd, wanted):
    node = start_monitor(use_diagnostic_updater=wanted)
    log = capfd.readouterr().err
    through = wanted and diagnostic_updater is not None
    assert ('diagnostics through diagnostic_updater' in log) is through, log
    assert ('diagnostics published directly' in log) is not through, log
    # The parameter says what happens (ros2 param dump said true while published directly).
    assert node.get_parameter('use_diagnostic_updater').value is through
    assert ('diagnostic_updater is not installed' in log) is (wanted and not through), log


def test_monitor_diagnostics_are_what_rqt_robot_monitor_reads(
        ros_context, spin, observer, start_monitor, wait_for, key_values):
    start_monitor(topics=['imu'], topic__imu__name=ns('/imu'), hardware_id='robot-7',
                  stats_period_s=0.2)

    def array():
        with observer.lock:
            return next((a for a in reversed(observer.arrays) if len(a.status) == 3), None)

    latest = wait_for(array, what='a diagnostics array with three statuses')
    names = sorted(s.name for s in latest.status)
    assert names == ['deadline_monitor: clock', 'deadline_monitor: host',
                     'deadline_monitor: topic imu']
    for status in latest.status:
        assert status.hardware_id == 'robot-7'
        assert status.level in (bytes([0]), bytes([1]), bytes([2]), bytes([3]))
        assert status.message
        assert status.values
        assert '/' not in status.name  # rqt_robot_monitor splits its tree on '/'
    topic = next(s for s in latest.status if s.name.endswith('topic imu'))
    assert topic.level == bytes([3])  # no publisher yet: STALE
    assert key_values(topic)['topic'] == ns('/imu')
    clock = next(s for s in latest.status if s.name.endswith('clock'))
    assert clock.level == bytes([0])  # no sim time, no /clock: nothing expected
    assert 'RTF' in key_values(clock)

    (result,) = observer.set_parameters(hardware_id='robot-8')
    assert result.successful
    wait_for(lambda: (a := array()) and {s.hardware_id for s in a.status} == {'robot-8'},
             what='the new hardware_id')


def test_expectations_show_in_the_topic_and_clock_statuses_without_changing_levels(snapshots):
    from ros2_deadline_monitor.configuration.expectations import evaluate, expectations_from

    snap = snapshots.snapshot(topics=[snapshots.topic()])
    expectations = expectations_from({'topic.imu.expect.max_misses': 0,
                                      'topic.imu.expect.max_lost': 5,
                                      'clock.expect.min_rtf': 0.5}, ['imu'])
    verdict = evaluate(expectations, snap)
    plain = diagnostics.statuses(snap, 'hw')
    statuses = diagnostics.statuses(snap, 'hw', verdict=verdict)
    assert [s.level for s in statuses] == [s.level for s in plain]
    topic = {kv.key: kv.value for kv in statuses[0].values}
    assert topic['expectations'] == '1 held, 1 failed'
    assert topic['expectation failed: max_misses'] == 'deadline misses 20, expected <= 0'
    assert 'expectation failed: max_lost' not in topic
    clock = {kv.key: kv.value for kv in statuses[-2].values}
    assert clock['expectations'] == '1 held, 0 failed'
    host = {kv.key for kv in statuses[-1].values}
    assert 'expectations' not in host
    assert not any(kv.key.startswith('expectation') for kv in plain[0].values)
