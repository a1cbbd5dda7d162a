"""The ``/metrics`` endpoint: every figure of the latest report, for Prometheus (OpenMetrics).

A sink like the stats messages and the diagnostics: it shows the snapshot the stats timer
made, through the one table of figures (``analysis/figures.py``), and does nothing on the
per-message path. The monitor node hands each report's snapshot to ``publish`` (a reference
swap); a scrape, on the HTTP server's thread, reads the last one and turns it into metric
families, once per report however many servers scrape.

Names are derived from the table, never listed here: ``deadline_monitor_<part>_<name>_<unit>``
with the figure's name in snake case and its unit turned into a Prometheus base unit (ms
become ``_seconds``, Hz ``_hertz``, % a ``_ratio``, MB ``_bytes``). A run total
(``Figure.metric`` ``COUNTER``) is a counter (``..._total``); every other figure a gauge over
the report window, ``..._window`` where a run total has the same name
(``deadline_monitor_topic_deadline_misses_window`` beside ``..._deadline_misses_total``).
Words and points in time are not exported. A figure with nothing to measure (None, NaN,
``unknown``) is an absent series, never 0. Labels: ``namespace`` and ``node`` of the monitor
(one scrape config covers a fleet of namespaced monitors) and ``topic`` for a topic's figures;
``..._level`` gives each status's level (0 OK, 1 WARN, 2 ERROR, 3 STALE).

``prometheus_client`` is optional (``optional.py``): without it ``unavailable()`` says why and
the monitor runs without the endpoint. This module imports no ROS package.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
import errno
import math
import numbers
import re
import socket
import sys
import threading
from typing import Any

from ros2_deadline_monitor.analysis.errors import MonitorError
from ros2_deadline_monitor.analysis.figures import (
    CLOCK,
    COUNTER,
    Figure,
    GAUGE,
    HOST,
    TOPIC,
)
from ros2_deadline_monitor.analysis.snapshot import Snapshot
from ros2_deadline_monitor.outputs import optional
from ros2_deadline_monitor.outputs.figure_docs import generated_list_main

__all__ = ['MetricSpec', 'MetricsEndpoint', 'MetricsError', 'PARTS', 'PREFIX',
           'SnapshotCollector', 'families', 'unavailable']

PREFIX = 'deadline_monitor'
MONITOR_LABELS = ('namespace', 'node')
TOPIC_LABELS = (*MONITOR_LABELS, 'topic')

UNITS: dict[str, tuple[str, float, float]] = {
    '': ('', 1.0, 1.0),
    'ms': ('seconds', 1.0, 1000.0),
    's': ('seconds', 1.0, 1.0),
    'Hz': ('hertz', 1.0, 1.0),
    'bytes': ('bytes', 1.0, 1.0),
    'bytes/s': ('bytes_per_second', 1.0, 1.0),
    'MB': ('bytes', 1e6, 1.0),
    '%': ('ratio', 1.0, 100.0),
    'p99/p50': ('ratio', 1.0, 1.0),
}
"""A figure's unit -> (Prometheus base unit, multiplier, divisor): value x mul / div.

A unit not listed (``s since start``, ``s sim time``: points in time) is not exported."""

STOP_TIMEOUT_S = 5.0


class MetricsError(MonitorError):
    """The endpoint cannot be served (the port is taken, the address is not this host's)."""


@dataclass(frozen=True)
class MetricSpec:
    """One metric family derived from one figure."""

    figure: Figure
    name: str
    """Family name with its unit, without ``_total`` (the client adds it to a counter)."""
    kind: str
    """``gauge`` or ``counter``."""
    unit: str
    documentation: str
    multiplier: float = 1.0
    divisor: float = 1.0

    def number(self, snapshot: Snapshot, part: Any) -> float | None:
        """Return the figure in the metric's unit, or None when it has nothing to measure."""
        value = self.figure.get(snapshot, part)
        kind = type(value)  # plain floats and ints first: tens of thousands a scrape
        if kind is not float and kind is not int and kind is not bool \
                and not isinstance(value, numbers.Real):  # None, words ('unknown (...)')
            return None
        number = float(value) * self.multiplier / self.divisor  # bools read 0 and 1
        return number if math.isfinite(number) else None


def _snake(name: str) -> str:
    return re.sub(r'[^a-z0-9]+', '_', name.lower().replace('+', ' plus ')).strip('_')


def derive(part: str, figures: Iterable[Figure]) -> tuple[MetricSpec, ...]:
    """Return the metric families of one part's figures (``part``: topic, clock or host)."""
    specs = []
    for figure in figures:
        if not figure.metric or figure.unit not in UNITS:
            continue
        unit, multiplier, divisor = UNITS[figure.unit]
        name = _snake(figure.name).removeprefix(f'{part}_')  # clock publishers: clock_publishers
        if figure.metric == COUNTER:
            name = name.removesuffix('_total')
        name = f'{PREFIX}_{part}_{name}'
        if unit and not name.endswith(f'_{unit}'):
            name = f'{name}_{unit}'
        specs.append(MetricSpec(figure, name, figure.metric, unit,
                                f"{figure.description} (diagnostic key '{figure.key}')",
                                multiplier, divisor))
    totals = {spec.name for spec in specs if spec.kind == COUNTER}
    return tuple(MetricSpec(spec.figure, f'{spec.name}_window', spec.kind, spec.unit,
                            spec.documentation, spec.multiplier, spec.divisor)
                 if spec.kind == GAUGE and spec.name in totals else spec for spec in specs)


PARTS: dict[str, tuple[MetricSpec, ...]] = {
    'topic': derive('topic', TOPIC), 'clock': derive('clock', CLOCK), 'host': derive('host', HOST)}
"""Every figure family by part, derived once from the table of figures."""

REPORT_TIME = f'{PREFIX}_report_time_seconds'
LEVEL = '_level'


def unavailable() -> str:
    """Say why there is no endpoint ('' when ``prometheus_client`` is installed)."""
    if optional.prometheus_client is not None:
        return ''
    return ('metrics_port is set but the Python package prometheus_client is not installed '
            '(pip install prometheus-client, or apt install python3-prometheus-client): '
            'no /metrics endpoint')


def families(snapshot: Snapshot, namespace: str, node: str) -> list[Any]:
    """Return the metric families of one snapshot; families without a sample are left out."""
    core = optional.prometheus_client.core  # callers checked unavailable()
    monitor = [namespace, node]
    out = []

    def family(spec_name: str, kind: str, documentation: str, labels: Sequence[str],
               unit: str = '') -> Any:
        make = core.CounterMetricFamily if kind == COUNTER else core.GaugeMetricFamily
        return make(spec_name, documentation, labels=labels, unit=unit)

    report_time = family(REPORT_TIME, GAUGE, 'when the report these figures come from was '
                         'made (Unix time): compare with time() to see a monitor that stopped '
                         'reporting', MONITOR_LABELS, 'seconds')
    report_time.add_metric(monitor, snapshot.wall_ns / 1e9)
    out.append(report_time)

    topics = [(topic, [*monitor, topic.topic or topic.topic_id]) for topic in snapshot.topics]
    measured = [(topic, labels) for topic, labels in topics if topic.report is not None]
    parts: dict[str, tuple[Sequence[str], list[tuple[Any, list[str]]]]] = {
        'topic': (TOPIC_LABELS, measured),
        'clock': (MONITOR_LABELS, [(snapshot.clock, monitor)]),
        'host': (MONITOR_LABELS, [(snapshot.host, monitor)]),
    }
    for part, (labels, members) in parts.items():
        for spec in PARTS[part]:
            metric = family(spec.name, spec.kind, spec.documentation, labels, spec.unit)
            for member, values in members:
                number = spec.number(snapshot, member)
                if number is not None:
                    metric.add_metric(values, number)
            if metric.samples:
                out.append(metric)
        every = topics if part == 'topic' else members
        level = family(f'{PREFIX}_{part}{LEVEL}', GAUGE, f'level of the {part} status: 0 OK, '
                       '1 WARN, 2 ERROR, 3 STALE (the reason is in /diagnostics)', labels)
        for member, values in every:
            level.add_metric(values, int(member.level))
        if level.samples:
            out.append(level)
    return out


BEGIN = ('<!-- metric list: generated from analysis/figures.py by '
         '`python -m ros2_deadline_monitor.outputs.metrics --write docs/metrics.md` -->')
END = '<!-- end of metric list -->'


def markdown() -> str:
    """Return the list of metrics, a table per part, as the docs show it."""
    lines = [BEGIN, '', '| metric | type | labels | diagnostic key |', '|---|---|---|---|',
             f"| `{REPORT_TIME}` | gauge | namespace, node | (the report's time, Unix s) |"]
    for part, specs in PARTS.items():
        labels = ', '.join(TOPIC_LABELS if part == 'topic' else MONITOR_LABELS)
        for spec in specs:
            name = f'{spec.name}_total' if spec.kind == COUNTER else spec.name
            lines.append(f'| `{name}` | {spec.kind} | {labels} | `{spec.figure.key}` |')
        lines.append(f'| `{PREFIX}_{part}{LEVEL}` | gauge | {labels} | (the level: 0 OK, '
                     '1 WARN, 2 ERROR, 3 STALE) |')
    return '\n'.join([*lines, '', END])


def main(argv: list[str] | None = None) -> int:
    """Print the metric list, or write it into a file between the markers."""
    return generated_list_main(argv, 'python -m ros2_deadline_monitor.outputs.metrics',
                               '/metrics list', markdown, BEGIN, END)


class SnapshotCollector:
    """A ``prometheus_client`` collector of the latest published snapshot.

    ``publish`` runs on the monitor's executor, ``collect`` on the server's threads: they
    share one reference, replaced whole, and the families made from it (cached per snapshot,
    so two Prometheus servers scraping cost one conversion).
    """

    def __init__(self, namespace: str, node: str) -> None:
        """Label every series with the monitor's ``namespace`` and ``node`` name."""
        self._namespace = namespace
        self._node = node
        self._snapshot: Snapshot | None = None
        self._made: tuple[Snapshot | None, list[Any]] = (None, [])

    def publish(self, snapshot: Snapshot) -> None:
        """Serve ``snapshot`` from now on (called at each report)."""
        self._snapshot = snapshot

    def collect(self) -> list[Any]:
        """Return the families of the latest snapshot; nothing before the first report."""
        snapshot = self._snapshot
        made = self._made
        if snapshot is None:
            return []
        if made[0] is not snapshot:
            made = (snapshot, families(snapshot, self._namespace, self._node))
            self._made = made
        return made[1]


class MetricsEndpoint:
    """A collector served over HTTP on a daemon thread; ``close`` stops it."""

    def __init__(self, namespace: str, node: str, bind: str, port: int,
                 log_error: Callable[[str], None] | None = None) -> None:
        """Listen on ``bind``:``port`` (0: any free port) or raise ``MetricsError``.

        ``log_error`` gets one line when a request fails (never a traceback on stderr).
        """
        prometheus_client = optional.prometheus_client
        if prometheus_client is None:
            raise MetricsError(unavailable())
        # Imported here: http.server brings ssl and email (6 MB) every monitor would pay.
        from http.server import ThreadingHTTPServer
        import socketserver

        self.collector = SnapshotCollector(namespace, node)
        registry = prometheus_client.CollectorRegistry(auto_describe=False)
        registry.register(self.collector)
        handler = prometheus_client.exposition.MetricsHandler.factory(registry)
        try:
            family = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM,
                                        flags=socket.AI_PASSIVE)[0][0]
        except socket.gaierror as err:
            raise MetricsError(f'metrics_bind: cannot listen on {bind!r}: {err.strerror}') \
                from None
        say = log_error or (lambda text: None)

        class Server(ThreadingHTTPServer):
            address_family = family
            daemon_threads = True

            def server_bind(self) -> None:
                # HTTPServer's looks the address up in DNS (getfqdn): seconds without a DNS.
                socketserver.TCPServer.server_bind(self)
                self.server_name = str(self.server_address[0])
                self.server_port = int(self.server_address[1])

            def handle_error(self, request: Any, client_address: Any) -> None:
                error = _handled_error()
                say(f'/metrics: a request from {client_address[0]} failed: {error}')

        try:
            self._server = Server((bind, port), handler)
        except OSError as err:
            raise MetricsError(_bind_error(bind, port, err)) from None
        self.bind = bind
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name='metrics_endpoint', daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """Where the figures are, e.g. ``http://127.0.0.1:9469/metrics``."""
        host = f'[{self.bind}]' if ':' in self.bind else self.bind
        return f'http://{host}:{self.port}/metrics'

    def publish(self, snapshot: Snapshot) -> None:
        """Serve ``snapshot`` from now on."""
        self.collector.publish(snapshot)

    def close(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=STOP_TIMEOUT_S)


def _handled_error() -> str:
    """Return the exception being handled as one line."""
    error = sys.exc_info()[1]
    return f'{type(error).__name__}: {error}' if error is not None else 'unknown error'


def _bind_error(bind: str, port: int, err: OSError) -> str:
    if err.errno == errno.EADDRINUSE:
        return (f'metrics_port: {bind}:{port} is already in use (another monitor or exporter '
                'on this host?): choose another metrics_port')
    if err.errno == errno.EADDRNOTAVAIL:
        return f'metrics_bind: {bind!r} is not an address of this host'
    if err.errno == errno.EACCES:
        return f'metrics_port: not allowed to listen on {bind}:{port}'
    return f'metrics_port: cannot listen on {bind}:{port}: {err.strerror or err}'


if __name__ == '__main__':
    sys.exit(main())
