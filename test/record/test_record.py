"""``record`` (issue 46): a bag without the ``ros2`` CLI that ``analyze`` and rosbags read.

The command line and the output path are checked before anything subscribes (one ``ERROR:``
line, exit 2). Live: the shipped ``sim_clock`` and ``demo_controller`` (100 Hz on sim time,
stamping each cycle's start, a 22 ms stall every 50th cycle, writing its own record) run as
users run them, next to the installed ``monitor`` and ``record``; after SIGINT, ``analyze`` on
the bag must give the live monitor's totals exactly, and the bag holds every cycle the
controller sent, with the definitions other tools need.
"""

from __future__ import annotations

import json
import os
import subprocess

from own_names import namespace, ns, ros_args  # test/plugins: the test's own names
import pytest

from ros2_deadline_monitor.configuration.usage import UsageError
from ros2_deadline_monitor.record.command import build_parser, parse_command_line

TOPIC = '/rec/cmd'


def test_the_parser_takes_topics_all_output_and_log_time():
    command = parse_command_line(['/a', 'b', '-o', 'run1'])
    assert (command.topics, command.all_topics, command.output, command.log_time) == \
        (('/a', 'b'), False, 'run1', 'source')
    command = parse_command_line(['--all', '--output', 'x', '--log-time', 'received'])
    assert (command.topics, command.all_topics, command.log_time) == ((), True, 'received')
    assert build_parser().prog == 'record'


@pytest.mark.parametrize(('argv', 'message'), [
    (['/a'], 'the following arguments are required: -o/--output'),
    (['-o', 'run1'], 'nothing to record: name the TOPICs (e.g. record /demo/cmd -o run1) or '
                     'give --all'),
    (['/a', '/a', '-o', 'x'], 'topic /a is given twice'),
    (['/a b', '-o', 'x'], "invalid topic name '/a b'"),
    (['/a', '-o', 'x', '--log-time', 'now'], "argument --log-time: invalid choice: 'now'"),
])
def test_bad_command_lines_are_one_sentence(argv, message):
    with pytest.raises(UsageError) as error:
        parse_command_line(argv)
    assert message in str(error.value)


def run(installed_executable, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    # A fixed width: argparse wraps the usage line at the terminal's.
    return subprocess.run([str(installed_executable('record')), *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, 'COLUMNS': '100'})


def test_help_lists_what_it_takes(installed_executable):
    done = run(installed_executable, '--help')
    assert done.returncode == 0, done.stderr
    for text in ('usage: record [-h] [--all] -o PATH', 'TOPIC', '--all', '-o PATH, --output PATH',
                 '--log-time {received,source}', 'analyze', 'Exit status'):
        assert text in done.stdout


def test_bad_paths_are_one_error_line_and_exit_2(installed_executable, tmp_path):
    (tmp_path / 'run1').mkdir()
    (tmp_path / 'file').write_text('x')
    cases = [
        (tmp_path / 'run1', 'exists already: record never overwrites, give a new name'),
        (tmp_path / 'file' / 'run1', 'is not a folder'),
        ('/proc/deadline_monitor_record_test', 'cannot create bag /proc/deadline_monitor_rec'),
    ]
    for path, message in cases:
        done = run(installed_executable, TOPIC, '-o', str(path))
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith('ERROR: ') and message in lines[0], \
            done.stderr
        assert done.stdout == ''
    assert list((tmp_path / 'run1').iterdir()) == []  # untouched
    done = run(installed_executable, '-o', str(tmp_path / 'new'))
    assert done.returncode == 2
    assert done.stderr.strip() == ('ERROR: nothing to record: name the TOPICs (e.g. record '
                                   '/demo/cmd -o run1) or give --all (see record --help)')
    assert not (tmp_path / 'new').exists()


def start_record(installed_executable, processes, tmp_path, *args: str) -> subprocess.Popen:
    log = open(tmp_path / 'record.log', 'w+')  # noqa: SIM115 - closed by `processes`
    process = subprocess.Popen([str(installed_executable('record')), *args, *ros_args()],
                               stdout=log, stderr=subprocess.STDOUT, text=True)
    process.log = log
    processes.append(process)
    return process


def record_output(tmp_path) -> str:
    return (tmp_path / 'record.log').read_text(errors='replace')


def test_analyze_on_the_recorded_bag_gives_the_live_monitors_totals(
        installed_executable, processes, run_tool, observer, wait_for, tmp_path):
    from rosbags.highlevel import AnyReader
    import yaml

    from ros2_deadline_monitor.testing import MonitorProcess
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    topic, clock = ns(TOPIC), ns('/clock')  # the test's own; /clock as remapped into it
    params = {'use_sim_time': True, 'topics': ['cmd'], 'topic.cmd.name': topic,
              'topic.cmd.period_ms': 10.0, 'topic.cmd.stamp': 'start',
              'topic.cmd.timeout_s': 60.0, 'arrival_timestamp': 'source',
              'clock_topic': clock}
    run_tool('sim_clock', step_ms=1.0, target_rtf=1.0, max_lag_ms=100.0, spin_us=0)
    bag = tmp_path / 'bags' / 'run1'
    monitor = MonitorProcess(params={**params, 'stats_period_s': 0.5},
                             ros_args=ros_args()).start()
    processes.append(monitor.process)
    record = start_record(installed_executable, processes, tmp_path, topic, '-o', str(bag))
    monitor.wait_ready()
    # /clock at both before the first cycle: both map every cycle's end to sim time.
    wait_for(lambda: (s := observer.latest_stats()) is not None and s.clock.messages_total > 0,
             timeout=30.0, what='/clock at the monitor')
    wait_for(lambda: f'recording {clock} (rosgraph_msgs/msg/Clock' in record_output(tmp_path),
             timeout=30.0, what='/clock at the recorder')
    cycles_path = tmp_path / 'cycles.json'
    # Its timer starts once both the monitor and the recorder subscribed.
    controller = run_tool('demo_controller', topic=topic, use_sim_time=True, duration_s=3.0,
                          stall_ms=22.0, stall_every=50, wait_for_subscribers=2,
                          record_path=str(cycles_path))
    assert controller.wait(timeout=60) == 0, (tmp_path / 'demo_controller.log').read_text()
    sent = len(CycleRecord.load(cycles_path))
    assert f'recording {topic} (geometry_msgs/msg/TwistStamped, reliable)' in \
        record_output(tmp_path)
    wait_for(lambda: (t := observer.topic_stats('cmd')) is not None
             and t.messages_total == sent, timeout=30.0,
             what=f'the monitor to count all {sent} cycles')
    # The controller waited for its messages to be acknowledged: the recorder's reader queue
    # holds every one of them, and SIGINT takes them before the bag is closed.
    record.send_signal(2)
    assert record.wait(timeout=30) == 0, record_output(tmp_path)
    result = monitor.stop()
    assert result.exit_code == 0, result.output
    output = record_output(tmp_path)
    assert 'recorded ' in output and f'into {bag} ({clock} ' in output
    assert f'{topic} {sent})' in output
    assert 'Traceback' not in output

    with AnyReader([bag]) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
        assert counts[topic] == sent and counts[clock] > 0
        assert set(counts) == {topic, clock}
        for connection in reader.connections:
            assert connection.msgdef.data.startswith(
                {topic: 'std_msgs/Header header\n',
                 clock: 'builtin_interfaces/Time clock\n'}[connection.topic])
            assert connection.digest.startswith('RIHS01_')
        first = next(reader.messages([c for c in reader.connections if c.topic == topic]))
        assert reader.deserialize(first[2], first[0].msgtype).header.frame_id == 'demo'

    config = tmp_path / 'monitor.yaml'
    config.write_text(yaml.safe_dump({'deadline_monitor': {'ros__parameters': params}}))
    result_path = tmp_path / 'result.json'
    done = subprocess.run(
        [str(installed_executable('analyze')), str(bag), '--config', str(config), '--json',
         str(result_path), '--no-progress'], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    offline = next(t for t in json.loads(result_path.read_text())['topics']
                   if t['name'] == 'cmd')
    live = result.topic('cmd')
    live_totals = (live['messages'], live['deadline_misses'], live['skipped_periods'])
    offline_totals = (offline['messages'], offline['deadline_misses'],
                      offline['skipped_periods'])
    print(f'sent {sent}; live {live_totals}; offline {offline_totals}')
    assert live_totals == offline_totals
    assert live['messages'] == sent and live['skipped_periods'] > 0


PRODUCER = r"""
import json, sys, time
import rclpy
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import String
from deadline_monitor_test_msgs.msg import MixedLayout

count = int(sys.argv[1])
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node('record_producer')
latched = node.create_publisher(String, 'rec/latched', QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL))
latched.publish(String(data='map'))
print('latched', flush=True)
sys.stdin.readline()  # the recorder runs: now a topic it has not seen yet
pub = node.create_publisher(MixedLayout, 'rec/late', QoSProfile(
    depth=count, reliability=ReliabilityPolicy.RELIABLE))
# A best effort writer: a reliable reader would not match it.
lossy = node.create_publisher(String, 'rec/lossy', QoSProfile(
    depth=count, reliability=ReliabilityPolicy.BEST_EFFORT))
deadline = time.monotonic() + 30.0
while pub.get_subscription_count() < 1 or lossy.get_subscription_count() < 1:
    if time.monotonic() > deadline:
        sys.exit('no reader matched rec/late and rec/lossy')
    time.sleep(0.01)
time.sleep(0.5)  # the reader's own discovery of these writers
for i in range(count):
    pub.publish(MixedLayout(last=float(i)))
    lossy.publish(String(data=str(i)))
    time.sleep(0.002)
for p in (pub, latched):
    p.wait_for_all_acked(Duration(seconds=10))
print(json.dumps({'late': count, 'latched': 1, 'lossy': count}), flush=True)
sys.stdin.readline()
node.destroy_node()
rclpy.try_shutdown()
"""


def test_all_records_latched_and_late_topics_and_sigterm_closes_the_bag(
        installed_executable, processes, wait_for, tmp_path, test_msgs):
    import signal
    import sys

    from rosbags.highlevel import AnyReader

    from ros2_deadline_monitor.bag.reader import BagSource

    producer = subprocess.Popen([sys.executable, '-c', PRODUCER, '200', *ros_args()],
                                stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    processes.append(producer)
    assert producer.stdout.readline().strip() == 'latched', producer.stderr.read()
    bag = tmp_path / 'run'
    record = start_record(installed_executable, processes, tmp_path, '--all', '-o', str(bag))
    wait_for(lambda: f'recording {ns("/rec/latched")} (std_msgs/msg/String, reliable, '
             'transient local)' in record_output(tmp_path), timeout=30.0,
             what='the latched topic recorded')
    producer.stdin.write('go\n')
    producer.stdin.flush()
    sent = json.loads(producer.stdout.readline())
    record.send_signal(signal.SIGTERM)
    assert record.wait(timeout=30) == 0, record_output(tmp_path)
    producer.stdin.write('exit\n')
    producer.stdin.flush()
    assert producer.wait(timeout=30) == 0

    output = record_output(tmp_path)
    assert (f'recording {ns("/rec/late")} (deadline_monitor_test_msgs/msg/MixedLayout, '
            'reliable)') in output
    assert f'recording {ns("/rec/lossy")} (std_msgs/msg/String, best effort)' in output
    with AnyReader([bag]) as reader:
        every = {c.topic: c.msgcount for c in reader.connections}
        # --all records the whole domain: a neighbour's topics too; the test's are its own.
        counts = {name: n for name, n in every.items() if name.startswith(namespace() + '/')}
        # Best effort may lose a message even here; a reliable reader would get none.
        assert 0 < counts.pop(ns('/rec/lossy')) <= sent['lossy']
        # Neither /rosout nor /parameter_events (--all skips them as monitor --all does).
        assert counts == {ns('/rec/latched'): sent['latched'], ns('/rec/late'): sent['late']}
        assert not {'/rosout', '/parameter_events'} & set(every)
        assert f'recorded {reader.message_count} messages into {bag}' in output
        late = next(c for c in reader.connections if c.topic == ns('/rec/late'))
        assert late.msgdef.data.startswith('bool flag\nfloat64[3] vector\n')
        assert '\nMSG: std_msgs/Header\n' in late.msgdef.data
        lasts = [reader.deserialize(raw, c.msgtype).last for c, _, raw in reader.messages([late])]
        assert lasts == [float(i) for i in range(sent['late'])]
    with BagSource(bag) as source:  # analyze's reader, with the bag's own definitions
        assert source.has_leading_stamp('std_msgs/msg/String') is False
        assert source.typestore(['deadline_monitor_test_msgs/msg/MixedLayout'])


BULK = r"""
import sys, time
import rclpy
from rclpy.duration import Duration
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import String

rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node('bulk_producer')
pub = node.create_publisher(String, sys.argv[1], QoSProfile(
    depth=1000, reliability=ReliabilityPolicy.RELIABLE))
deadline = time.monotonic() + 30.0
while pub.get_subscription_count() < 1:
    if time.monotonic() > deadline:
        sys.exit('no reader matched')
    time.sleep(0.01)
time.sleep(0.5)
for i in range(200):
    pub.publish(String(data='x' * 1000))
    time.sleep(0.001)
pub.wait_for_all_acked(Duration(seconds=10))
print('sent', flush=True)
sys.stdin.readline()
node.destroy_node()
rclpy.try_shutdown()
"""


def test_a_full_disk_is_one_error_line_and_exit_1(installed_executable, processes, full_disk,
                                                   tmp_path):
    import signal
    import sys

    bag = full_disk / 'run1'
    record = start_record(installed_executable, processes, tmp_path, ns('/rec/bulk'), '-o',
                          str(bag))
    producer = subprocess.Popen([sys.executable, '-c', BULK, ns('/rec/bulk'), *ros_args()],
                                stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    processes.append(producer)
    # 200 kB acknowledged by the recorder: more than the 64 kB disk holds.
    assert producer.stdout.readline().strip() == 'sent', producer.stderr.read()
    record.send_signal(signal.SIGINT)
    assert record.wait(timeout=30) == 1, record_output(tmp_path)
    producer.stdin.write('exit\n')
    producer.stdin.flush()
    assert producer.wait(timeout=30) == 0
    errors = [line for line in record_output(tmp_path).splitlines() if 'ERROR' in line]
    assert len(errors) == 1 and errors[0].startswith('ERROR: cannot '), errors
    assert 'No space left on device' in errors[0]
    assert 'Traceback' not in record_output(tmp_path)
