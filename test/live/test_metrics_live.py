"""The /metrics endpoint of a live monitor: scraped over HTTP, and by a real Prometheus.

Real parts only: the monitor (in this process, or the installed executable), the shipped
``demo_controller`` in its own process as the producer (its cycle record is the ground truth),
HTTP on 127.0.0.1, and Debian's ``prometheus`` server (skipped with a reason where it is not
installed; ``.ci/run`` installs it). A scrape is matched with the published ``MonitorStats``
of the same report by ``deadline_monitor_report_time_seconds``, the report's header stamp,
so the comparison is exact while the producer runs.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
import yaml

pytest.importorskip('prometheus_client')

from own_names import namespace, ns, ros_args  # test/plugins: the test's own names
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from ros2_deadline_monitor.analysis.figures import COUNTER  # noqa: E402
from ros2_deadline_monitor.outputs.metrics import PARTS  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCRAPE_CONFIG = REPO / 'config' / 'prometheus.yml'
TOPIC = '/metrics_test/cmd'
"""The test's own is ns(TOPIC) (own_names)."""
PERIOD_MS = 20.0
# A 45 ms stall every 10th cycle of a 20 ms timer: misses and skipped periods to count.
CONTROLLER = {'rate_hz': 1000.0 / PERIOD_MS, 'topic': TOPIC[1:], 'stall_ms': 45.0,
              'stall_every': 10, 'wait_for_subscribers': 1}


def free_port() -> int:
    """Return a TCP port nothing listens on now (the OS's choice)."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def scrape(url: str) -> dict[str, dict[tuple, float]]:
    """GET ``url`` and return {sample name: {sorted labels: value}}, parsed by the client."""
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    samples: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = \
                sample.value
    return samples


def one(samples: dict[str, dict[tuple, float]], name: str, **labels: str) -> float | None:
    """Return the value of the series ``name`` whose labels include ``labels`` (None: absent)."""
    found = [value for key, value in samples.get(name, {}).items()
             if labels.items() <= dict(key).items()]
    assert len(found) <= 1, (name, labels, found)
    return found[0] if found else None


def field(message: object, path: str) -> object:
    for part in path.split('.'):
        message = getattr(message, part)
    return message


def stamp_s(stats: object) -> float:
    stamp = stats.header.stamp
    return (stamp.sec * 1_000_000_000 + stamp.nanosec) / 1e9


def sample_name(spec) -> str:
    return f'{spec.name}_total' if spec.kind == COUNTER else spec.name


def compare(samples: dict, stats: object, topic_id: str, **labels: str) -> int:
    """Assert every exported figure that has a message field equals that field; return how many.

    A field that is NaN in the message (nothing to measure) must be an absent series.
    """
    [topic] = [t for t in stats.topics if t.name == topic_id]
    compared = 0
    for part, message, where in (('topic', topic, {**labels, 'topic': ns(TOPIC)}),
                                 ('clock', stats.clock, labels), ('host', stats.host, labels)):
        for spec in PARTS[part]:
            if spec.figure.field is None:
                continue
            value = float(field(message, spec.figure.field))
            got = one(samples, sample_name(spec), **where)
            if math.isnan(value):
                assert got is None, f'{spec.name}: {got} exported for NaN in the message'
                continue
            if got is None:
                continue  # left out by the figure (e.g. 'producers' shown from two on)
            expected = value * spec.figure.field_scale * spec.multiplier / spec.divisor
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-12), spec.name
            compared += 1
    return compared


def matching_report(observer, wait_for, report_time_s: float) -> object:
    """Return the published MonitorStats whose header stamp is the scraped report's time."""
    def find():
        with observer.lock:
            return next((s for s in reversed(observer.stats) if stamp_s(s) == report_time_s),
                        None)
    return wait_for(find, what=f'the MonitorStats of the report made at {report_time_s}')


def test_a_scrape_equals_the_published_stats_of_the_same_report(
        start_monitor, observer, run_tool, wait_for, tmp_path):
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    port = free_port()
    start_monitor(topics=['cmd'], topic__cmd__name=ns(TOPIC), topic__cmd__period_ms=PERIOD_MS,
                  topic__cmd__stamp='start', topic__cmd__timeout_s=60.0, stats_period_s=0.2,
                  metrics_port=port)
    url = f'http://127.0.0.1:{port}/metrics'
    labels = {'namespace': namespace(), 'node': 'deadline_monitor'}
    record_path = tmp_path / 'cycles.json'
    controller = run_tool('demo_controller', duration_s=2.0, record_path=str(record_path),
                          **CONTROLLER)
    # Reports from the first one the observer received on are all delivered to it (reliable).
    first = stamp_s(wait_for(lambda: observer.stats and observer.stats[0],
                             what='the first MonitorStats at the observer'))
    compared = 0
    # While the producer runs: every scrape is one report, equal to its message.
    while controller.poll() is None:
        samples = scrape(url)
        report = one(samples, 'deadline_monitor_report_time_seconds', **labels)
        if report is not None and report >= first:
            compared += compare(samples, matching_report(observer, wait_for, report), 'cmd',
                                **labels)
        time.sleep(0.3)
    assert controller.wait(timeout=20) == 0
    sent = len(CycleRecord.load(record_path))

    def all_counted():
        samples = scrape(url)
        total = one(samples, 'deadline_monitor_topic_messages_total', **labels, topic=ns(TOPIC))
        return total == sent and samples

    samples = wait_for(all_counted, timeout=20.0,
                       what=f'the scraped messages total to reach the {sent} sent')
    stats = matching_report(observer, wait_for,
                            one(samples, 'deadline_monitor_report_time_seconds', **labels))
    [topic] = [t for t in stats.topics if t.name == 'cmd']
    where = {**labels, 'topic': ns(TOPIC)}
    assert topic.messages_total == sent
    misses = one(samples, 'deadline_monitor_topic_deadline_misses_total', **where)
    skipped = one(samples, 'deadline_monitor_topic_skipped_periods_total', **where)
    assert (misses, skipped) == (topic.deadline_misses_total, topic.skipped_periods_total)
    assert misses > 0 and skipped > 0, 'the stalls were not seen'
    assert one(samples, 'deadline_monitor_topic_messages_lost_total', **where) == 0
    compared += compare(samples, stats, 'cmd', **labels)
    print(f'{sent} messages, {misses:g} misses, {skipped:g} skipped: {compared} figures '
          'compared with the published MonitorStats', file=sys.stderr)
    assert compared > 40
    # No /clock in this run: the RTF is unknown, an absent series, not 0.
    assert one(samples, 'deadline_monitor_clock_rtf', **labels) is None
    assert one(samples, 'deadline_monitor_clock_messages_total', **labels) == 0


def monitor_command(installed_executable, *args: str) -> list[str]:
    """Return the monitor's command in the test's namespace (relative topics are its own)."""
    return [str(installed_executable('monitor')), *args, *ros_args()]


def test_a_taken_port_stops_the_monitor_with_one_error_line(installed_executable):
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(monitor_command(installed_executable, TOPIC[1:], '--metrics-port',
                                              str(port)),
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in (done.stdout + done.stderr).splitlines() if 'ERROR' in line]
    assert errors == [f'ERROR: metrics_port: 127.0.0.1:{port} is already in use (another '
                      'monitor or exporter on this host?): choose another metrics_port']
    assert 'Traceback' not in done.stdout + done.stderr


def test_without_prometheus_client_the_monitor_runs_and_says_so_once(installed_executable,
                                                                     tmp_path):
    hidden = tmp_path / 'hidden'
    hidden.mkdir()
    (hidden / 'prometheus_client.py').write_text(
        "raise ImportError('prometheus_client hidden by the test')\n", encoding='utf-8')
    env = {**os.environ,
           'PYTHONPATH': os.pathsep.join([str(hidden), os.environ.get('PYTHONPATH', '')])}
    done = subprocess.run(
        monitor_command(installed_executable, TOPIC[1:], '--metrics-port', str(free_port()),
                        '--ros-args', '-p', 'duration_s:=1.0'),
        capture_output=True, text=True, timeout=60, env=env)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    said = [line for line in output.splitlines() if 'prometheus_client' in line]
    assert len(said) == 1 and '[WARN]' in said[0] and 'no /metrics endpoint' in said[0], output
    assert 'Traceback' not in output and 'summary' in output  # it ran to the end


# -- a real Prometheus server -----------------------------------------------------------------

def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read().decode())


@pytest.fixture
def prometheus_server(tmp_path):
    """Return ``start(target_port) -> base URL``: Prometheus scraping one target every 1 s.

    Its configuration is the shipped ``config/prometheus.yml`` with the test's target and
    interval; its data goes to ``tmp_path``. Stopped (and killed if need be) after the test.
    """
    binary = shutil.which('prometheus')
    if binary is None:
        pytest.skip('the prometheus server is not installed (Debian package prometheus; '
                    '.ci/run installs it)')
    started: list[tuple[subprocess.Popen, object]] = []

    def start(target_port: int) -> str:
        config = yaml.safe_load(SCRAPE_CONFIG.read_text(encoding='utf-8'))
        config['global'].update(scrape_interval='1s', evaluation_interval='1s')
        config['scrape_configs'][0]['static_configs'] = [
            {'targets': [f'127.0.0.1:{target_port}']}]
        path = tmp_path / 'prometheus.yml'
        path.write_text(yaml.safe_dump(config), encoding='utf-8')
        port = free_port()
        log_path = tmp_path / 'prometheus.log'
        log = open(log_path, 'w', encoding='utf-8')  # noqa: SIM115 - closed at teardown
        process = subprocess.Popen(
            [binary, f'--config.file={path}', f'--storage.tsdb.path={tmp_path / "tsdb"}',
             f'--web.listen-address=127.0.0.1:{port}'],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        started.append((process, log))
        url = f'http://127.0.0.1:{port}'
        deadline = time.monotonic() + 60.0
        while True:
            try:
                with urllib.request.urlopen(f'{url}/-/ready', timeout=5) as response:
                    if response.status == 200:
                        return url
            except (urllib.error.URLError, ConnectionError):
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f'prometheus did not get ready:\n{log_path.read_text()}')
            time.sleep(0.2)

    yield start
    for process, log in started:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


def query(url: str, expr: str) -> list[dict]:
    """Return the result vector of an instant query of Prometheus' HTTP API."""
    answer = get_json(f'{url}/api/v1/query?{urllib.parse.urlencode({"query": expr})}')
    assert answer['status'] == 'success', answer
    return answer['data']['result']


def test_prometheus_scrapes_a_namespaced_monitor(prometheus_server, installed_executable,
                                                 run_tool, processes, wait_for, tmp_path):
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    port = free_port()
    log = open(tmp_path / 'monitor.log', 'w', encoding='utf-8')  # noqa: SIM115
    monitor = subprocess.Popen(
        monitor_command(installed_executable, ns(TOPIC), '--period-ms', str(PERIOD_MS),
                        '--stamp', 'start', '--timeout-s', '60', '--metrics-port', str(port),
                        '--ros-args', '-r', f'__ns:={ns("/robot1")}', '-p', 'stats_period_s:=0.5'),
        stdout=log, stderr=subprocess.STDOUT)
    monitor.log = log
    processes.append(monitor)
    url = prometheus_server(port)
    record_path = tmp_path / 'cycles.json'
    controller = run_tool('demo_controller', duration_s=2.0, record_path=str(record_path),
                          **CONTROLLER)
    assert controller.wait(timeout=30) == 0
    sent = len(CycleRecord.load(record_path))
    where = f'{{namespace="{ns("/robot1")}", topic="{ns(TOPIC)}"}}'

    def scraped_all():
        result = query(url, f'deadline_monitor_topic_messages_total{where}')
        return result and float(result[0]['value'][1]) == sent and result

    [series] = wait_for(scraped_all, timeout=60.0,
                        what=f'Prometheus to hold the {sent} messages of {ns(TOPIC)}')
    assert series['metric'] == {
        '__name__': 'deadline_monitor_topic_messages_total', 'job': 'ros2_deadline_monitor',
        'instance': f'127.0.0.1:{port}', 'namespace': ns('/robot1'), 'node': 'deadline_monitor',
        'topic': ns(TOPIC)}
    [misses] = query(url, f'deadline_monitor_topic_deadline_misses_total{where}')
    # A window figure: its series ends when the window holds no message; any sample will do.
    [rate] = query(url, f'max_over_time(deadline_monitor_topic_rate_wall_hertz{where}[10m])')
    [level] = query(url, f'deadline_monitor_topic_level{where}')
    assert float(misses['value'][1]) > 0
    assert 0 < float(rate['value'][1]) < 2 * 1000.0 / PERIOD_MS
    assert float(level['value'][1]) in (0, 1, 2)
    # Without /clock the RTF is unknown: no series at all, while the clock's counter is 0.
    assert query(url, 'deadline_monitor_clock_rtf') == []
    [clock] = query(url, f'deadline_monitor_clock_messages_total{{namespace="{ns("/robot1")}"}}')
    assert float(clock['value'][1]) == 0
    print(f'Prometheus at {url}: {sent} messages, {misses["value"][1]} misses of {ns(TOPIC)}',
          file=sys.stderr)
