"""The /metrics sink over hand-built snapshots: names from the table, values, absent unknowns.

The exposition is read back with ``prometheus_client``'s own parser, as Prometheus reads it.
No ROS here; the live endpoint is in ``test_metrics_live.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
import re
import shutil
import socket
import subprocess
import urllib.request

import pytest
import yaml

pytest.importorskip('prometheus_client')

from prometheus_client import CollectorRegistry, generate_latest  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from ros2_deadline_monitor.analysis.figures import CLOCK, COUNTER, HOST, TOPIC  # noqa: E402
from ros2_deadline_monitor.analysis.reports import Level  # noqa: E402
from ros2_deadline_monitor.outputs import (
    metrics,
    optional,  # noqa: E402
)
from ros2_deadline_monitor.outputs.metrics import (  # noqa: E402
    families,
    MetricsEndpoint,
    MetricsError,
    PARTS,
    SnapshotCollector,
)

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / 'config' / 'grafana' / 'ros2_deadline_monitor.json'
SCRAPE_CONFIG = REPO / 'config' / 'prometheus.yml'
NS, NODE = '/robot1', 'deadline_monitor'


def scrape(snapshot) -> dict[str, dict[tuple, float]]:
    """Return {sample name: {sorted labels: value}} of one snapshot's exposition, parsed."""
    collector = SnapshotCollector(NS, NODE)
    collector.publish(snapshot)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return parse(generate_latest(registry).decode())


def parse(text: str) -> dict[str, dict[tuple, float]]:
    samples: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = \
                sample.value
    return samples


def labels(topic: str | None = None) -> tuple:
    values = {'namespace': NS, 'node': NODE}
    if topic is not None:
        values['topic'] = topic
    return tuple(sorted(values.items()))


def sample_name(spec) -> str:
    return f'{spec.name}_total' if spec.kind == COUNTER else spec.name


def test_names_come_from_the_table_of_figures():
    names = [sample_name(spec) for specs in PARTS.values() for spec in specs]
    assert len(names) == len(set(names)), 'two figures give one metric name'
    for part, specs in PARTS.items():
        for spec in specs:
            assert re.fullmatch(rf'deadline_monitor_{part}_[a-z0-9_]+', spec.name), spec.name
            assert spec.figure.key in spec.documentation
    by_key = {spec.figure.key: sample_name(spec) for spec in PARTS['topic']}
    # Units in the names, in Prometheus base units; run totals are counters.
    assert by_key['max interval wall (ms)'] == 'deadline_monitor_topic_max_interval_wall_seconds'
    assert by_key['rate wall (Hz)'] == 'deadline_monitor_topic_rate_wall_hertz'
    assert by_key['max size (bytes)'] == 'deadline_monitor_topic_max_size_bytes'
    assert by_key['bandwidth (bytes/s)'] == 'deadline_monitor_topic_bandwidth_bytes_per_second'
    assert by_key['miss ratio (%)'] == 'deadline_monitor_topic_miss_ratio'
    assert by_key['deadline misses total'] == 'deadline_monitor_topic_deadline_misses_total'
    assert by_key['outage total (s)'] == 'deadline_monitor_topic_outage_seconds_total'
    # A window count beside its run total says so.
    assert by_key['deadline misses'] == 'deadline_monitor_topic_deadline_misses_window'
    assert by_key['skipped periods'] == 'deadline_monitor_topic_skipped_periods_window'
    # Words, points in time and the clock's RTF copied into every topic are not exported.
    assert not {'topic', 'type', 'rule', 'RTF', 'max interval wall at (s since start)'} & set(
        by_key)
    clock = {spec.figure.key: sample_name(spec) for spec in PARTS['clock']}
    assert clock['RTF'] == 'deadline_monitor_clock_rtf'
    assert clock['messages total'] == 'deadline_monitor_clock_messages_total'
    assert clock['clock publishers'] == 'deadline_monitor_clock_publishers'
    host = {spec.figure.key: sample_name(spec) for spec in PARTS['host']}
    assert host['monitor CPU (%)'] == 'deadline_monitor_host_monitor_cpu_ratio'
    assert host['monitor max RSS (MB)'] == 'deadline_monitor_host_monitor_max_rss_bytes'
    counters = {spec.figure.key for specs in PARTS.values() for spec in specs
                if spec.kind == COUNTER}
    assert all(key.endswith('total') or key in ('outage total (s)', 'unmonitored total (s)')
               for key in counters)
    assert 'RTF total' not in counters  # RTF since start: a gauge, not a count


def test_every_measured_figure_is_a_series_with_its_value_in_base_units(snapshots):
    # The counts shown once there are any (issue 47's unseen cycles), all measured here.
    report = snapshots.topic_report(intervals_across_loss_total=6, stamps_back_total=7,
                                    stamps_shared_total=8, unlearned_total=9,
                                    age_unknown_total=11, period_relearned_total=12,
                                    lost_by_monitor_total=13, unmonitored_total=2,
                                    unmonitored_ns=3 * snapshots.S,
                                    unmonitored_messages_total=14,
                                    outage_max_at_ns=snapshots.T0 + 3 * snapshots.S)
    snapshot = snapshots.snapshot(topics=[snapshots.topic(report=report)])
    [topic] = snapshot.topics
    got = scrape(snapshot)
    checked = 0
    for figures, part, member, where in ((TOPIC, 'topic', topic, labels('/imu')),
                                         (CLOCK, 'clock', snapshot.clock, labels()),
                                         (HOST, 'host', snapshot.host, labels())):
        for spec in PARTS[part]:
            value = spec.figure.value(snapshot, member)
            assert isinstance(value, (int, float)), spec.figure.key  # all measured here
            expected = float(value) * spec.multiplier / spec.divisor
            assert got[sample_name(spec)] == {where: pytest.approx(expected, rel=1e-12)}, \
                spec.name
            checked += 1
        assert len(PARTS[part]) < len(figures)  # words are left out
    assert checked > 60
    assert got['deadline_monitor_topic_deadline_misses_total'] == {labels('/imu'): 20}
    assert got['deadline_monitor_topic_skipped_periods_total'] == {labels('/imu'): 10}
    assert got['deadline_monitor_topic_messages_total'] == {labels('/imu'): 500}
    assert got['deadline_monitor_topic_max_interval_wall_seconds'] == {
        labels('/imu'): pytest.approx(0.0225)}
    assert got['deadline_monitor_topic_miss_ratio'] == {labels('/imu'): pytest.approx(0.04)}
    assert got['deadline_monitor_clock_rtf'] == {labels(): 0.9995}
    assert got['deadline_monitor_topic_level'] == {labels('/imu'): Level.WARN}
    assert got['deadline_monitor_clock_level'] == {labels(): Level.OK}
    assert got['deadline_monitor_host_level'] == {labels(): Level.WARN}
    assert got['deadline_monitor_report_time_seconds'] == {labels(): snapshot.wall_ns / 1e9}


def test_an_unknown_figure_is_an_absent_series_never_0(snapshots):
    from ros2_deadline_monitor.analysis.reports import HostReport, IntervalSummary

    nothing = snapshots.topic_report(
        interval_wall=IntervalSummary('wall'), rate_wall_hz=math.nan, loss_known=False,
        loss_note='2 writers', messages_lost=0, response_max_ns=math.nan)
    snapshot = snapshots.snapshot(
        topics=[snapshots.topic(report=nothing)],
        clock=snapshots.clock(report=snapshots.clock_report(rtf=math.nan)),
        host=snapshots.host(report=HostReport(cgroup_available=False, cpu_fraction=0.01)))
    got = scrape(snapshot)
    known = scrape(snapshots.snapshot())
    for name in ('deadline_monitor_topic_mean_interval_wall_seconds',
                 'deadline_monitor_topic_p99_interval_wall_seconds',
                 'deadline_monitor_topic_rate_wall_hertz',
                 'deadline_monitor_topic_messages_lost_window',
                 'deadline_monitor_topic_max_response_seconds',
                 'deadline_monitor_clock_rtf',
                 'deadline_monitor_host_cgroup_throttled_periods',
                 'deadline_monitor_host_cgroup_throttled_seconds'):
        assert name in known, name  # present when measured...
        assert name not in got, name  # ... absent, not 0, when not
    # A count of nothing is known: 0 intervals is a sample.
    assert got['deadline_monitor_topic_intervals_wall'] == {labels('/imu'): 0}
    assert got['deadline_monitor_topic_rate_sim_hertz'] == {labels('/imu'): 98.5}


def test_a_topic_without_settings_has_only_its_level(snapshots):
    bad = snapshots.topic('broken', topic='', report=None, level=Level.ERROR,
                          reason='topic.broken.period_ms must be a number')
    got = scrape(snapshots.snapshot(topics=[snapshots.topic(), bad]))
    assert got['deadline_monitor_topic_level'] == {labels('/imu'): Level.WARN,
                                                   labels('broken'): Level.ERROR}
    assert set(got['deadline_monitor_topic_messages_total']) == {labels('/imu')}


def test_the_collector_serves_the_last_published_snapshot_once_converted(snapshots):
    collector = SnapshotCollector(NS, NODE)
    assert list(collector.collect()) == []  # before the first report: nothing to say
    first = snapshots.snapshot()
    collector.publish(first)
    made = collector.collect()
    assert collector.collect() is made  # a second scrape of the same report: no new work
    collector.publish(snapshots.snapshot(wall_ns=first.wall_ns + 1_000_000_000))
    assert collector.collect() is not made
    assert families(first, NS, NODE)[0].samples[0].value == first.wall_ns / 1e9


def get(url: str, accept: str | None = None) -> tuple[str, str]:
    request = urllib.request.Request(url, headers={'Accept': accept} if accept else {})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers['Content-Type'], response.read().decode()


def test_the_endpoint_serves_text_and_openmetrics_over_http(snapshots):
    endpoint = MetricsEndpoint(NS, NODE, '127.0.0.1', 0)
    try:
        assert endpoint.url == f'http://127.0.0.1:{endpoint.port}/metrics'
        kind, text = get(endpoint.url)
        assert kind.startswith('text/plain') and parse(text) == {}
        endpoint.publish(snapshots.snapshot())
        kind, text = get(endpoint.url)
        assert parse(text)['deadline_monitor_topic_messages_total'] == {labels('/imu'): 500}
        kind, text = get(endpoint.url, 'application/openmetrics-text; version=1.0.0')
        assert kind.startswith('application/openmetrics-text') and text.endswith('# EOF\n')
        assert '# UNIT deadline_monitor_topic_max_interval_wall_seconds seconds' in text
    finally:
        endpoint.close()
    with pytest.raises(OSError):
        get(endpoint.url)  # closed: the port is free again


def test_a_failing_request_is_one_logged_line_not_a_traceback(snapshots, monkeypatch, capsys):
    def broken(*args):
        raise RuntimeError('a getter broke')

    said: list[str] = []
    endpoint = MetricsEndpoint(NS, NODE, '127.0.0.1', 0, log_error=said.append)
    try:
        endpoint.publish(snapshots.snapshot())
        monkeypatch.setattr(metrics, 'families', broken)
        with pytest.raises(OSError):  # the connection closes without an answer
            get(endpoint.url)
        assert said == ['/metrics: a request from 127.0.0.1 failed: RuntimeError: a getter '
                        'broke']
        monkeypatch.undo()
        assert parse(get(endpoint.url)[1])['deadline_monitor_topic_messages_total']
    finally:
        endpoint.close()
    assert 'Traceback' not in capsys.readouterr().err


def test_a_taken_port_or_a_foreign_address_is_one_clear_error():
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(MetricsError, match=rf'^metrics_port: 127.0.0.1:{port} is already '
                                               r'in use \(another monitor'):
            MetricsEndpoint(NS, NODE, '127.0.0.1', port)
    with pytest.raises(MetricsError, match=r"^metrics_bind: '192.0.2.1' is not an address of "
                                           'this host'):
        MetricsEndpoint(NS, NODE, '192.0.2.1', 0)  # TEST-NET-1: never a local address
    with pytest.raises(MetricsError, match=r"^metrics_bind: cannot listen on 'no.such.host."
                                           "invalid'"):
        MetricsEndpoint(NS, NODE, 'no.such.host.invalid', 0)


def test_without_prometheus_client_the_endpoint_says_why(monkeypatch):
    assert metrics.unavailable() == ''
    monkeypatch.setattr(optional, 'prometheus_client', None)
    reason = metrics.unavailable()
    assert 'prometheus_client is not installed' in reason and 'pip install' in reason
    with pytest.raises(MetricsError, match='prometheus_client is not installed'):
        MetricsEndpoint(NS, NODE, '127.0.0.1', 0)


def exported_names() -> set[str]:
    names = {sample_name(spec) for specs in PARTS.values() for spec in specs}
    return names | {metrics.REPORT_TIME} | {f'deadline_monitor_{part}_level' for part in PARTS}


def test_the_grafana_dashboard_uses_only_exported_series():
    dashboard = json.loads(DASHBOARD.read_text(encoding='utf-8'))
    assert dashboard['uid'] and 'id' not in dashboard  # provisioning gives the id
    variables = {v['name']: v for v in dashboard['templating']['list']}
    assert {'datasource', 'namespace', 'topic'} <= set(variables)
    expressions = [target['expr'] for panel in dashboard['panels']
                   for target in panel['targets']]
    expressions += [v['definition'] for v in variables.values() if 'definition' in v]
    used = {name for expr in expressions for name in re.findall(r'deadline_monitor_\w+', expr)}
    assert used - exported_names() == set()
    for wanted in ('deadline_monitor_clock_rtf', 'deadline_monitor_topic_rate_wall_hertz',
                   'deadline_monitor_topic_max_interval_wall_seconds',
                   'deadline_monitor_topic_deadline_misses_total',
                   'deadline_monitor_topic_skipped_periods_total',
                   'deadline_monitor_topic_messages_lost_total',
                   'deadline_monitor_topic_level'):
        assert wanted in used, wanted
    topic_panels = [e for e in expressions if 'deadline_monitor_topic_' in e and '(' not in e[:6]]
    assert all('$namespace' in e and '$topic' in e for e in topic_panels
               if not e.startswith('label_values')), topic_panels


def test_the_scrape_config_is_one_job_for_the_fleet():
    config = yaml.safe_load(SCRAPE_CONFIG.read_text(encoding='utf-8'))
    [job] = config['scrape_configs']
    assert job['job_name'] == 'ros2_deadline_monitor'
    assert job['static_configs'][0]['targets']
    promtool = shutil.which('promtool')
    if promtool is None:
        return  # the Debian package prometheus brings it (.ci/run installs it)
    checked = subprocess.run([promtool, 'check', 'config', str(SCRAPE_CONFIG)],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


# -- the parameters and flags that turn it on -----------------------------------------------

def test_metrics_port_is_off_by_default_and_else_a_user_port():
    from ros2_deadline_monitor.analysis.errors import ConfigError
    from ros2_deadline_monitor.configuration.parameters import GLOBAL_SPECS, settings_from
    from ros2_deadline_monitor.live.parameter_declarations import descriptor

    default = settings_from({})
    assert (default.metrics_port, default.metrics_bind) == (0, '127.0.0.1')
    chosen = settings_from({'metrics_port': 9469, 'metrics_bind': '0.0.0.0'})
    assert (chosen.metrics_port, chosen.metrics_bind) == (9469, '0.0.0.0')
    assert settings_from({'metrics_port': 65535, 'metrics_bind': '::'}).metrics_port == 65535
    for port in (80, 1023, 65536, -1):
        with pytest.raises(ConfigError, match=rf'^metrics_port must be 0 \(off\) or a port from '
                                              rf'1024 to 65535, got {port}$'):
            settings_from({'metrics_port': port})
    with pytest.raises(ConfigError, match='metrics_port must be an integer'):
        settings_from({'metrics_port': 9469.0})
    for bind in ('', 'two words', 5):
        with pytest.raises(ConfigError, match='^metrics_bind must be an address'):
            settings_from({'metrics_bind': bind})
    specs = {spec.name: spec for spec in GLOBAL_SPECS}
    described = descriptor(specs['metrics_port'], 'metrics_port')
    assert described.read_only and described.additional_constraints == '0 (off) or 1024 to 65535'
    assert (described.integer_range[0].from_value, described.integer_range[0].to_value) == (
        0, 65535)
    assert descriptor(specs['metrics_bind'], 'metrics_bind').read_only


def test_monitor_flags_set_the_metrics_parameters():
    from ros2_deadline_monitor.live.cli import build_parser, parse_command_line

    command = parse_command_line(['/x', '--metrics-port', '9469', '--metrics-bind', '0.0.0.0'])
    assert command.metrics == (('metrics_port', 9469), ('metrics_bind', '0.0.0.0'))
    assert parse_command_line(['--all', '--metrics-port', '9469']).metrics == (
        ('metrics_port', 9469),)
    assert parse_command_line(['/x']).metrics == ()
    text = build_parser().format_help()
    assert '--metrics-port PORT' in text and '--metrics-bind ADDR' in text


def test_the_docs_list_every_metric_as_generated():
    text = (REPO / 'docs' / 'metrics.md').read_text(encoding='utf-8')
    start = text.index(metrics.BEGIN)
    block = text[start:text.index(metrics.END, start) + len(metrics.END)]
    assert block == metrics.markdown(), (
        'docs/metrics.md is out of date: python -m ros2_deadline_monitor.outputs.metrics '
        '--write docs/metrics.md')
    for name in exported_names():
        assert f'`{name}`' in block, name


def test_the_optional_dependency_is_declared_for_rosdep_and_pip():
    from xml.etree import ElementTree

    root = ElementTree.parse(REPO / 'package.xml').getroot()
    assert 'python3-prometheus-client' in {e.text for e in root.iter('exec_depend')}
    requirements = (REPO / 'scripts' / 'requirements.txt').read_text(encoding='utf-8')
    assert re.search(r'^prometheus-client>=0\.16$', requirements, re.MULTILINE)


def test_the_dashboard_and_scrape_config_are_installed_with_the_package():
    packages = pytest.importorskip('ament_index_python.packages')
    try:
        share = Path(packages.get_package_share_directory('ros2_deadline_monitor'))
    except packages.PackageNotFoundError:
        pytest.skip('the package is not installed (scripts/dev test builds and installs it)')
    for name in ('grafana/ros2_deadline_monitor.json', 'prometheus.yml'):
        installed = share / 'config' / name
        assert installed.is_file(), installed
        assert installed.read_bytes() == (REPO / 'config' / name).read_bytes(), name
