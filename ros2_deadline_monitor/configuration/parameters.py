"""The monitor's parameters as data, and their conversion to validated configs.

Names, defaults, ranges and descriptions of every parameter (``ParamSpec``), and the functions
that turn ``{name: value}`` mappings into ``MonitorSettings`` and ``TopicConfig``. Per-topic
settings live under identifier keys (``topics: [cmd]``, ``topic.cmd.name: /cmd_vel``) so no
``/`` ever appears in a parameter name. Floats with units exist only here, at the edge; every
``ConfigError`` text becomes the reason a parameter change is rejected.

No ROS import: the live node (``live/parameter_declarations.py`` adds the descriptors and
declarations) and the offline analyzer (which reads the node's YAML file) share this one
conversion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
import difflib
import math
import re
import socket
from typing import Any

from ros2_deadline_monitor.analysis.config import (
    AnalysisConfig,
    check_topic_name,
    CLOCKS,
    DEFAULT_JITTER_FRACTION,
    duration_ns,
    KINDS,
    MAX_LEVEL_WINDOWS,
    MAX_PERIOD_NS,
    MAX_STEADY_REFRESHES_PER_S,
    NS_PER_MS,
    NS_PER_S,
    RULES,
    STAMPS,
    Thresholds,
    TopicConfig,
)
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.analysis.stamp_field import check_stamp_field, DEFAULT_STAMP_FIELD
from ros2_deadline_monitor.configuration.expectations import CLOCK_PREFIX

TOPICS = 'topics'
USE_SIM_TIME = 'use_sim_time'
AUTO = 'auto'
ARRIVAL_TIMESTAMPS = {'received': 'received_timestamp', 'source': 'source_timestamp'}
"""Parameter value -> key of the rclpy message info dict (and ``TopicStats.arrival_source``)."""

_ID_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')
_DEFAULT_ANALYSIS = AnalysisConfig()
_DEFAULT_THRESHOLDS = Thresholds()
_MAX_MS = MAX_PERIOD_NS / NS_PER_MS
_MAX_S = MAX_PERIOD_NS / NS_PER_S
_MIN_RATE_HZ = NS_PER_S / MAX_PERIOD_NS
_MAX_RATE_HZ = 1e6
DEFAULT_TAKE_PERIOD_S = 0.05
MIN_PORT = 1024
"""Lowest ``metrics_port`` (the ports below need root)."""
MAX_PORT = 65535
DEFAULT_METRICS_BIND = '127.0.0.1'
_HOST_RE = re.compile(r'^[A-Za-z0-9_.:%-]+$')


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: default (its type too), description and the allowed values."""

    name: str
    default: Any
    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    read_only: bool = False
    constraints: str = ''
    """What ``low``..``high`` cannot say (``ros2 param describe``'s additional constraints)."""


GLOBAL_SPECS: tuple[ParamSpec, ...] = (
    ParamSpec('stats_period_s', 1.0,
              'Period of the stats timer (steady clock, s): one MonitorStats message and one '
              '/diagnostics array per period.', 0.05, 60.0),
    ParamSpec('window_s', _DEFAULT_ANALYSIS.window_ns / NS_PER_S,
              'Rolling window (wall s) of the window figures (percentiles, rates, window '
              'counts).', 0.1, _MAX_S),
    ParamSpec('max_steady_refreshes_per_s', _DEFAULT_ANALYSIS.max_steady_refreshes_per_s,
              'Routine refreshes of steady slow topics a second, all topics together, at most '
              'about; 0 = no limit. With more slow topics than this covers at their own pace '
              '(100 topics at 1 Hz with the default 10), each stands longer: 1,000 topics at '
              '1 Hz are each refreshed every 100 s, and anything that happens still refreshes '
              'a topic at the next report.',
              0.0, MAX_STEADY_REFRESHES_PER_S),
    ParamSpec('reuse_reports', True,
              'Reuse at each report what nothing changed: a steady slow topic keeps the '
              'snapshot of its last refresh (see max_steady_refreshes_per_s), and the messages '
              'and statuses made from it are reused; false = every report computes every '
              "topic's snapshot and every output afresh (costs more CPU with many topics; "
              'the final report and the summary are the same).', read_only=True),
    ParamSpec('window_cycles', _DEFAULT_ANALYSIS.window_cycles,
              'Most cycles kept per topic for the window figures (bounds memory).', 2, 1_000_000),
    ParamSpec('learn_intervals', _DEFAULT_ANALYSIS.learn_intervals,
              'Intervals the period of a topic without a configured period is learned from '
              '(their span over the timer grid slots they cover, snapped to a whole rate in Hz '
              'within 1 %).', 2, 10_000),
    ParamSpec('target_rtf', _DEFAULT_ANALYSIS.target_rtf,
              'Real time factor the simulator aims at; scales the RTF levels and the default '
              'wall budget of sim-clock topics.', 0.001, 1000.0),
    ParamSpec('rtf_bin_s', _DEFAULT_ANALYSIS.rtf_bin_ns / NS_PER_S,
              'Length (wall s) of the fixed windows whose worst and best RTF is reported.',
              0.001, 60.0, read_only=True),
    ParamSpec('miss_ratio_error', _DEFAULT_THRESHOLDS.miss_ratio_error,
              'A topic is ERROR when deadline misses / messages in the window exceed this.',
              0.0, 1.0),
    ParamSpec('rtf_warn_fraction', _DEFAULT_THRESHOLDS.rtf_warn_fraction,
              'The clock is WARN when the window RTF is below this fraction of target_rtf.',
              0.0, 1.0),
    ParamSpec('rtf_error_fraction', _DEFAULT_THRESHOLDS.rtf_error_fraction,
              'The clock is ERROR when the window RTF is below this fraction of target_rtf.',
              0.0, 1.0),
    ParamSpec('clock_timeout_s', _DEFAULT_THRESHOLDS.clock_timeout_ns / NS_PER_S,
              'The clock is ERROR (WARN without use_sim_time) after this long (wall s) '
              'without a /clock message.', 0.01, _MAX_S),
    ParamSpec('grace_s', _DEFAULT_THRESHOLDS.grace_ns / NS_PER_S,
              'Start-up grace (wall s): after the monitor starts or a topic appears in the '
              'graph, a timeout is no ERROR for this long, and a topic without any message '
              'stays STALE; past it, no message at all is an ERROR. 0 = off (a topic without '
              'any message stays STALE).', 0.0, _MAX_S),
    ParamSpec('level_rise_windows', _DEFAULT_THRESHOLDS.level_rise_windows,
              "A topic's level rises (OK -> WARN -> ERROR) only after this many stats periods "
              'in a row asked for it; 1 = at once.', 1, MAX_LEVEL_WINDOWS),
    ParamSpec('level_fall_windows', _DEFAULT_THRESHOLDS.level_fall_windows,
              "A topic's level falls only after this many stats periods in a row asked for "
              'it; 1 = at once.', 1, MAX_LEVEL_WINDOWS),
    ParamSpec('clock_topic', '/clock',
              'Topic of the simulation clock (rosgraph_msgs/msg/Clock).', read_only=True),
    ParamSpec('simulator_rtf_topic', '',
              "Topic on which the simulator publishes its own RTF (std_msgs/msg/Float32 or "
              "Float64), shown next to the measured RTF; '' for none.", read_only=True),
    ParamSpec('hardware_id', socket.gethostname(),
              "hardware_id of every diagnostic status (rqt_robot_monitor shows it in a "
              "status's inspector; its tree follows the status names); default: the host name."),
    ParamSpec('use_diagnostic_updater', True,
              "Publish /diagnostics on diagnostic_updater's publisher, with its status names "
              '(diagnostic_updater.use_fqn), when it is installed; false: on the '
              "monitor's own publisher, named after the node. The array is the same.",
              read_only=True),
    ParamSpec('arrival_timestamp', 'source',
              "Middleware timestamp taken as the end of a cycle: 'source' (writer side, when "
              "the message left the producer) or 'received' (reader side, adds transport "
              "and the reader host's scheduling).", choices=tuple(ARRIVAL_TIMESTAMPS),
              read_only=True),
    ParamSpec('take_period_s', DEFAULT_TAKE_PERIOD_S,
              'Messages are taken in batches every this long (steady s) from reader queues '
              'outside the executor, which costs far less CPU per message; the middleware '
              'timestamps keep the figures exact. 0 = one executor callback per message.',
              0.0, 1.0, read_only=True),
    ParamSpec('take_queue_depth', 0,
              'Reader queue depth per topic when taking in batches; 0 = sized from the rate: '
              'rate x max(1 s, 4 x take_period_s), at least 50, at most 10000 (1000 while the '
              'rate is unknown). A full queue between two takes is counted as a queue '
              'overflow.',
              0, 100_000, read_only=True),
    ParamSpec('duration_s', 0.0,
              'Stop after this long (steady s from the start), write the summary and exit with '
              'the verdict of the expectations (3 when one failed); 0 = run until SIGINT or '
              'SIGTERM.', 0.0, _MAX_S, read_only=True),
    ParamSpec('summary_file', '',
              'Write the final summary as JSON here at shutdown (per-topic totals, longest '
              "intervals, RTF, every expectation with measured value and limit); '' = none.",
              read_only=True),
    ParamSpec('all_topics', False,
              'Also monitor every topic that has a publisher in the graph, now or later, '
              'except infrastructure and hidden topics (monitor --all); such topics get the '
              'settings all_topics.* and no topic.<id>.* parameters of their own.',
              read_only=True),
    ParamSpec('metrics_port', 0,
              'Serve the figures for Prometheus (OpenMetrics) on http://metrics_bind:'
              'metrics_port/metrics: 0 = off; else a port from 1024 to 65535. Needs the Python '
              'package prometheus_client.', 0, MAX_PORT, read_only=True,
              constraints=f'0 (off) or {MIN_PORT} to {MAX_PORT}'),
    ParamSpec('metrics_bind', DEFAULT_METRICS_BIND,
              "Address the /metrics endpoint listens on: '127.0.0.1' (this machine only), "
              "'0.0.0.0' (every IPv4 interface, for a Prometheus on another machine), '::' or "
              'an address of this host.', read_only=True),
)

TOPIC_SPECS: tuple[ParamSpec, ...] = (
    ParamSpec('name', '',
              'Topic to monitor; default: the identifier, as a name relative to the node '
              'namespace.'),
    ParamSpec('kind', KINDS[0],
              "'timer': a periodic producer (period, deadline misses, skipped periods); "
              "'event': messages come when something happens (a planner's output): rate, max "
              'gap and age only, no misses or skipped periods, and a timeout only when '
              'timeout_s is set. A timer topic without a period whose learning windows keep '
              'no timer rhythm is timed as an event topic too.', choices=KINDS),
    ParamSpec('period_ms', 0.0,
              'Expected cycle period T (ms); 0 = learn it from the first learn_intervals '
              'intervals (or use rate_hz).', 0.0, _MAX_MS),
    ParamSpec('rate_hz', 0.0,
              'Expected rate (Hz), an alternative to period_ms; 0 = unset. Set only one of the '
              'two.', 0.0, _MAX_RATE_HZ),
    ParamSpec('deadline_ms', 0.0,
              'Deadline D for the response rule (ms); 0 = the period.', 0.0, _MAX_MS),
    ParamSpec('jitter_tolerance_ms', 0.0,
              'Jitter tolerance J (ms): an interval longer than T + J is a miss under the '
              'interval rule; 0 = use jitter_tolerance_percent.', 0.0, _MAX_MS),
    ParamSpec('jitter_tolerance_percent', 100 * DEFAULT_JITTER_FRACTION,
              'Jitter tolerance as a percentage of the period, used when jitter_tolerance_ms '
              'is 0.', 0.0, 100.0),
    ParamSpec('rule', AUTO,
              "Deadline miss rule: 'interval' (interval > T + J), 'response' (end - scheduled "
              "slot > D) or 'auto' (response when stamp is 'start', else interval).",
              choices=(AUTO, *RULES)),
    ParamSpec('stamp', STAMPS[0],
              "What the stamp (stamp_field) means: 'auto' (the stamp starts the cycle when "
              'the first messages show it is usable: one clock, increasing, spaced like the '
              "arrivals; else the arrival; the status says which and why), 'none' (not the "
              "cycle start: the arrival is used) or 'start' (the producer stamps the start of "
              'its cycle).',
              choices=STAMPS),
    ParamSpec('stamp_field', DEFAULT_STAMP_FIELD,
              'Where the stamp is in the message, as a field path to a builtin_interfaces/Time: '
              "'header.stamp', 'transforms[0].header.stamp' (tf2_msgs/TFMessage), 'stamp'. "
              'Read from the raw bytes; a path the type does not have is rejected when the '
              "type is known. With the default, a type without 'header' whose first field is "
              'a Header or a Time (or a Time topic) uses that.'),
    ParamSpec('clock', AUTO,
              "Clock of the producing timer: 'sim', 'wall' or 'auto' (sim when use_sim_time "
              "is true).", choices=(AUTO, *CLOCKS)),
    ParamSpec('wall_budget_ms', 0.0,
              'Wall-clock budget per cycle (ms), counted on wall intervals; 0 = T / target_rtf '
              '+ J.', 0.0, _MAX_MS),
    ParamSpec('timeout_s', 0.0,
              'ERROR after this long without a message (wall s, stretched by 1/RTF for sim '
              'clocks); 0 = max(10 T, 1 s).', 0.0, _MAX_S),
    ParamSpec('qos_deadline_ms', 0.0,
              'Request a middleware deadline QoS (ms) and count its missed events; 0 = off. '
              'Only used when every publisher offers a deadline no longer than this.',
              0.0, _MAX_MS),
)

_GLOBALS = {spec.name: spec for spec in GLOBAL_SPECS}
_TOPIC_FIELDS = {spec.name: spec for spec in TOPIC_SPECS}
DOUBLE_PARAMETERS = frozenset(
    [s.name for s in GLOBAL_SPECS if isinstance(s.default, float)])
TOPIC_DOUBLE_FIELDS = frozenset(s.name for s in TOPIC_SPECS if isinstance(s.default, float))


@dataclass(frozen=True)
class MonitorSettings:
    """Monitor-wide settings converted from the global parameters."""

    analysis: AnalysisConfig
    stats_period_ns: int
    clock_topic: str
    simulator_rtf_topic: str
    hardware_id: str
    arrival_timestamp: str
    take_period_ns: int = 0
    """0: a callback per message on the executor; else the batch take period."""
    take_queue_depth: int = 0
    """0: sized from the rate (``qos.take_depth``)."""
    duration_ns: int = 0
    """0: run until stopped; else stop this long after the start (steady clock)."""
    summary_file: str = ''
    """Where the final summary JSON goes ('' for nowhere)."""
    all_topics: bool = False
    """Also monitor every topic discovered in the graph (``monitor --all``)."""
    use_diagnostic_updater: bool = True
    """Publish /diagnostics through diagnostic_updater when it is installed."""
    reuse_reports: bool = True
    """Keep steady topics' snapshots and their outputs between reports (``outputs/reporter``)."""
    metrics_port: int = 0
    """0: no /metrics endpoint; else its TCP port."""
    metrics_bind: str = DEFAULT_METRICS_BIND
    """Address the /metrics endpoint listens on."""


def topic_param(topic_id: str, field: str) -> str:
    """Full parameter name of one per-topic setting, e.g. ``topic.cmd.period_ms``."""
    return f'topic.{topic_id}.{field}'


def split_topic_param(name: str) -> tuple[str, str] | None:
    """Split a per-topic parameter name into ``(identifier, field)``; None for others."""
    parts = name.split('.')
    if len(parts) == 3 and parts[0] == 'topic' and parts[2] in _TOPIC_FIELDS:
        return parts[1], parts[2]
    return None


def topic_default(topic_id: str, spec: ParamSpec) -> Any:
    """Return the declared default of a per-topic setting (the name defaults to the id)."""
    return topic_id if spec.name == 'name' else spec.default


def is_double(name: str) -> bool:
    """Tell whether a parameter is a double (an integer set on it is converted)."""
    split = split_topic_param(name)
    if split is None and name.startswith(ALL_TOPICS_PREFIX):
        split = ('', name[len(ALL_TOPICS_PREFIX):])
    return name in DOUBLE_PARAMETERS or (split is not None and split[1] in TOPIC_DOUBLE_FIELDS)


def parse_topic_ids(value: Iterable[str] | None) -> list[str]:
    """Validate the ``topics`` list: identifiers, no duplicates."""
    ids = list(value or [])
    seen: set[str] = set()
    for topic_id in ids:
        if not isinstance(topic_id, str) or not _ID_RE.match(topic_id):
            raise ConfigError(
                f'{TOPICS}: identifier {topic_id!r} must start with a letter and hold only '
                'letters, digits and underscores (set the topic itself in '
                'topic.<identifier>.name)')
        if topic_id in seen:
            raise ConfigError(f'{TOPICS}: identifier {topic_id!r} is listed twice')
        seen.add(topic_id)
    return ids


def _number(name: str, value: Any) -> float:
    """Return a parameter value (from YAML or rclpy) as a float, or raise ConfigError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f'{name} must be a number, got {value!r}')
    return float(value)


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f'{name} must be an integer, got {value!r}')
    return value


def _seconds(values: Mapping[str, Any], name: str, zero_ok: bool = False) -> int:
    return duration_ns(name, _number(name, _value(values, name)), NS_PER_S, zero_ok=zero_ok)


def _value(values: Mapping[str, Any], name: str) -> Any:
    value = values.get(name)
    return _GLOBALS[name].default if value is None else value


def _choice(name: str, value: Any, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise ConfigError(f'{name} must be one of {", ".join(choices)}, got {value!r}')
    return value


def settings_from(values: Mapping[str, Any]) -> MonitorSettings:
    """Monitor-wide settings from parameter values (missing ones take their defaults)."""
    thresholds = Thresholds(
        miss_ratio_error=_number('miss_ratio_error', _value(values, 'miss_ratio_error')),
        rtf_warn_fraction=_number('rtf_warn_fraction', _value(values, 'rtf_warn_fraction')),
        rtf_error_fraction=_number('rtf_error_fraction', _value(values, 'rtf_error_fraction')),
        clock_timeout_ns=_seconds(values, 'clock_timeout_s'),
        grace_ns=_seconds(values, 'grace_s', zero_ok=True),
        level_rise_windows=_integer('level_rise_windows', _value(values, 'level_rise_windows')),
        level_fall_windows=_integer('level_fall_windows', _value(values, 'level_fall_windows')),
    )
    analysis = AnalysisConfig(
        window_ns=_seconds(values, 'window_s'),
        window_cycles=_integer('window_cycles', _value(values, 'window_cycles')),
        learn_intervals=_integer('learn_intervals', _value(values, 'learn_intervals')),
        target_rtf=_number('target_rtf', _value(values, 'target_rtf')),
        rtf_bin_ns=_seconds(values, 'rtf_bin_s'),
        thresholds=thresholds,
        max_steady_refreshes_per_s=_number('max_steady_refreshes_per_s',
                                           _value(values, 'max_steady_refreshes_per_s')),
    )
    stats_period_ns = _seconds(values, 'stats_period_s')
    clock_topic = _value(values, 'clock_topic')
    _check_topic('clock_topic', clock_topic)
    rtf_topic = _value(values, 'simulator_rtf_topic')
    if rtf_topic:
        _check_topic('simulator_rtf_topic', rtf_topic)
    arrival = _choice('arrival_timestamp', _value(values, 'arrival_timestamp'),
                      ARRIVAL_TIMESTAMPS)
    take_period_ns = _seconds(values, 'take_period_s', zero_ok=True)
    take_queue_depth = _integer('take_queue_depth', _value(values, 'take_queue_depth'))
    if take_queue_depth < 0:
        raise ConfigError(f'take_queue_depth must be ≥ 0, got {take_queue_depth}')
    return MonitorSettings(
        analysis=analysis,
        stats_period_ns=stats_period_ns,
        clock_topic=clock_topic,
        simulator_rtf_topic=rtf_topic,
        hardware_id=str(_value(values, 'hardware_id')),
        arrival_timestamp=ARRIVAL_TIMESTAMPS[arrival],
        take_period_ns=take_period_ns,
        take_queue_depth=take_queue_depth,
        duration_ns=_seconds(values, 'duration_s', zero_ok=True),
        summary_file=str(_value(values, 'summary_file')),
        all_topics=_flag('all_topics', _value(values, 'all_topics')),
        use_diagnostic_updater=_flag('use_diagnostic_updater',
                                     _value(values, 'use_diagnostic_updater')),
        reuse_reports=_flag('reuse_reports', _value(values, 'reuse_reports')),
        metrics_port=_port('metrics_port', _value(values, 'metrics_port')),
        metrics_bind=_host('metrics_bind', _value(values, 'metrics_bind')),
    )


def _port(name: str, value: Any) -> int:
    """Return a TCP port a user may open, or 0 (off); ports below 1024 need root."""
    port = _integer(name, value)
    if port != 0 and not MIN_PORT <= port <= MAX_PORT:
        raise ConfigError(f'{name} must be 0 (off) or a port from {MIN_PORT} to {MAX_PORT}, '
                          f'got {port}')
    return port


def _host(name: str, value: Any) -> str:
    """Return an address to listen on (whether this host has it shows when binding)."""
    if not isinstance(value, str) or not _HOST_RE.match(value):
        raise ConfigError(f"{name} must be an address such as '127.0.0.1', '0.0.0.0' or '::', "
                          f'got {value!r}')
    return value


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f'{name} must be true or false, got {value!r}')
    return value


def _check_topic(param: str, topic: Any) -> None:
    if not isinstance(topic, str):
        raise ConfigError(f'{param} must be a string, got {topic!r}')
    try:
        check_topic_name(topic)
    except ConfigError as err:
        raise ConfigError(f'{param}: {err}') from None


def topic_config_from(topic_id: str, values: Mapping[str, Any], use_sim_time: bool,
                      resolve: Callable[[str], str] = str) -> TopicConfig:
    """Build the ``TopicConfig`` of one identifier from its ``topic.<id>.*`` values.

    ``resolve`` expands a relative or private topic name to a fully qualified one
    (``Node.resolve_topic_name``); duplicates are found on the resolved names.
    """
    def get(field: str) -> Any:
        value = values.get(topic_param(topic_id, field))
        return topic_default(topic_id, _TOPIC_FIELDS[field]) if value is None else value

    def name(field: str) -> str:
        return topic_param(topic_id, field)

    topic = get('name')
    _check_topic(name('name'), topic)
    try:
        resolved = resolve(topic)
    except Exception as err:  # rclpy raises several types for names it cannot expand
        raise ConfigError(f'{name("name")}: cannot resolve {topic!r}: {err}') from None

    period_ns = _optional_ms(name('period_ms'), get('period_ms'))
    rate_hz = _number(name('rate_hz'), get('rate_hz'))
    if _is_set(name('rate_hz'), rate_hz):
        if period_ns is not None:
            raise ConfigError(f'{name("period_ms")} and {name("rate_hz")} are both set; set '
                              'one of them to 0')
        if rate_hz < _MIN_RATE_HZ:
            raise ConfigError(f'{name("rate_hz")} must be at least 1/3600 Hz (a period of at '
                              f'most one hour), got {rate_hz}')
        period_ns = round(NS_PER_S / rate_hz)

    jitter_ns = _optional_ms(name('jitter_tolerance_ms'), get('jitter_tolerance_ms'))
    percent = _number(name('jitter_tolerance_percent'), get('jitter_tolerance_percent'))
    if math.isnan(percent) or not 0 <= percent <= 100:
        raise ConfigError(f'{name("jitter_tolerance_percent")} must be within [0, 100], got '
                          f'{percent}')
    rule = _choice(name('rule'), get('rule'), (AUTO, *RULES))
    clock = _choice(name('clock'), get('clock'), (AUTO, *CLOCKS))
    if clock == AUTO:
        clock = 'sim' if use_sim_time else 'wall'
    timeout_s = _number(name('timeout_s'), get('timeout_s'))
    timeout_ns = (duration_ns(name('timeout_s'), timeout_s, NS_PER_S)
                  if _is_set(name('timeout_s'), timeout_s) else None)
    return TopicConfig(
        name=topic_id,
        topic=resolved,
        period_ns=period_ns,
        deadline_ns=_optional_ms(name('deadline_ms'), get('deadline_ms')),
        jitter_tolerance_ns=jitter_ns,
        jitter_fraction=percent / 100,
        rule=None if rule == AUTO else rule,
        stamp=_choice(name('stamp'), get('stamp'), STAMPS),
        stamp_field=check_stamp_field(name('stamp_field'), get('stamp_field')),
        clock=clock,
        wall_budget_ns=_optional_ms(name('wall_budget_ms'), get('wall_budget_ms')),
        timeout_ns=timeout_ns,
        qos_deadline_ns=_optional_ms(name('qos_deadline_ms'), get('qos_deadline_ms')),
        kind=_choice(name('kind'), get('kind'), KINDS),
    )


def _is_set(param: str, value: float) -> bool:
    """Return False for 0 (= use the default); reject NaN, infinities and negatives."""
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise ConfigError(f'{param} must be a finite number ≥ 0, got {value}')
    return value != 0


def _optional_ms(param: str, value: Any) -> int | None:
    """Nanoseconds of a ms setting where 0 means 'default' (None)."""
    value_ms = _number(param, value)
    if not _is_set(param, value_ms):
        return None
    return duration_ns(param, value_ms, NS_PER_MS)


def check_unique_topics(configs: Iterable[TopicConfig]) -> None:
    """Reject two identifiers that monitor the same topic."""
    owner: dict[str, str] = {}
    for config in configs:
        if config.topic in owner:
            raise ConfigError(
                f'{topic_param(config.name, "name")}: {config.topic} is already monitored as '
                f'{owner[config.topic]!r}')
        owner[config.topic] = config.name

def desired_topics(topic_ids: Iterable[str], values: Mapping[str, Any], use_sim_time: bool,
                   resolve: Callable[[str], str] = str,
                   errors: Mapping[str, Mapping[str, str]] | None = None
                   ) -> tuple[dict[str, TopicConfig], dict[str, str]]:
    """Configs of the listed topics, and the reason each invalid one is not monitored.

    ``errors`` holds per identifier the parameters whose given value could not even be
    declared (wrong type); such a topic is invalid until they are set again.
    """
    desired: dict[str, TopicConfig] = {}
    invalid: dict[str, str] = {}
    owners: dict[str, str] = {}
    for topic_id in topic_ids:
        declared = (errors or {}).get(topic_id)
        try:
            if declared:
                raise ConfigError('; '.join(declared.values()))
            config = topic_config_from(topic_id, values, use_sim_time, resolve)
            if config.topic in owners:
                raise ConfigError(f'{config.topic} is already monitored as '
                                  f'{owners[config.topic]!r}')
        except ConfigError as err:
            invalid[topic_id] = str(err)
            continue
        owners[config.topic] = topic_id
        desired[topic_id] = config
    return desired, invalid


def check_change(values: Mapping[str, Any], changed: Mapping[str, Any],
                 invalid_ids: Iterable[str], resolve: Callable[[str], str] = str) -> None:
    """Raise ``ConfigError`` when ``changed`` would make the configuration invalid.

    ``values`` are the current parameter values. A topic that is already invalid and is not
    touched by the change does not block it; a touched topic must become valid.
    """
    values = {**values, **changed}
    if _GLOBALS.keys() & changed.keys():
        settings_from(values)
    new_ids = parse_topic_ids(values.get(TOPICS))
    touched = {split[0] for split in map(split_topic_param, changed) if split}
    if USE_SIM_TIME in changed:
        touched.update(new_ids)
    check_all = TOPICS in changed or bool(touched)
    invalid = set(invalid_ids)
    owners: dict[str, str] = {}
    for topic_id in new_ids:
        if topic_id in invalid and topic_id not in touched:
            continue
        try:
            config = topic_config_from(topic_id, values, bool(values.get(USE_SIM_TIME)),
                                       resolve)
        except ConfigError:
            if topic_id in touched:
                raise
            continue
        if check_all and config.topic in owners:
            raise ConfigError(f'topic.{topic_id}.name: {config.topic} is already '
                              f'monitored as {owners[config.topic]!r}')
        owners[config.topic] = topic_id


IGNORED_LIBRARY_PARAMETERS = {
    'diagnostic_updater.period': '/diagnostics is published at every report (stats_period_s)',
}
"""Libraries' parameters a user may set on the monitor to no effect, with why."""


def unknown_parameter_warnings(given: Iterable[str], known: Iterable[str],
                               topic_ids: Iterable[str]) -> list[str]:
    """One warning per given parameter that nothing uses and that may be another's.

    rclpy ignores overrides of undeclared parameters silently, so a typo would leave the
    default in force without a word. ``known``: every parameter declared, the libraries' too
    (``diagnostic_updater.use_fqn`` is the updater's, and used). A typo under the monitor's
    own prefixes is no warning: ``unknown_own_parameters`` refuses it.
    """
    return _sort_unknown(given, known, topic_ids)[1]


def unknown_own_parameters(given: Iterable[str], known: Iterable[str],
                           topic_ids: Iterable[str]) -> list[str]:
    """One line per given parameter under the monitor's own prefixes that nothing declares.

    ``topic.cmd.perod_ms`` would leave the period to be learned, ``clock.expect.min_rft``
    gate on nothing: the monitor refuses to start on them, as ``analyze`` refuses the file.
    Names outside ``topic.``, ``clock.`` and ``all_topics.`` may be another node's (a
    shared ``/**`` params file) and only get a warning (``unknown_parameter_warnings``).
    """
    return _sort_unknown(given, known, topic_ids)[0]


def _sort_unknown(given: Iterable[str], known: Iterable[str], topic_ids: Iterable[str]
                  ) -> tuple[list[str], list[str]]:
    """(refusals, warnings) for the given parameters nothing declared."""
    known = set(known)
    listed = set(topic_ids)
    refusals: list[str] = []
    warnings: list[str] = []
    for name in sorted(set(given)):
        if name in IGNORED_LIBRARY_PARAMETERS:
            warnings.append(f'parameter {name} is ignored: {IGNORED_LIBRARY_PARAMETERS[name]}')
            continue
        if name in known or name.startswith('qos_overrides.'):
            continue
        parts = name.split('.')
        if len(parts) == 3 and parts[0] == 'topic' and parts[1] not in listed \
                and split_topic_param(name):
            warnings.append(f'parameter {name} is ignored: {parts[1]!r} is not in {TOPICS} '
                            f'(it is used if {parts[1]!r} is added to {TOPICS} at run time)')
        elif name in template_names():
            warnings.append(f'parameter {name} is ignored: {ALL_TOPICS} is false')
        elif name.startswith(_STRICT_PREFIXES):
            candidates = known | set(template_names()) | (
                {topic_param(parts[1], spec.name) for spec in TOPIC_SPECS}
                if len(parts) >= 3 and parts[0] == 'topic' else set())
            refusals.append(f'unknown parameter {name}{did_you_mean(name, candidates)}')
        else:
            warnings.append(f'parameter {name} is unknown and ignored{did_you_mean(name, known)}')
    return refusals, warnings


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """Return `` (did you mean X?)`` naming the known parameter closest to ``name``, or ''."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f' (did you mean {close[0]}?)' if close else ''


CONFIG_FIELD_PARAMS = {
    'topic': 'name', 'period_ns': 'period_ms', 'deadline_ns': 'deadline_ms',
    'jitter_tolerance_ns': 'jitter_tolerance_ms', 'jitter_fraction': 'jitter_tolerance_percent',
    'wall_budget_ns': 'wall_budget_ms', 'timeout_ns': 'timeout_s',
    'qos_deadline_ns': 'qos_deadline_ms',
}
"""``TopicConfig`` fields whose parameter has another name (the unit at the edge)."""


def changed_parameters(topic_id: str, fields: Iterable[str]) -> list[str]:
    """Return the parameter names of changed ``TopicConfig`` fields, for the log.

    ``period_ns`` becomes ``topic.<id>.period_ms`` (a period given as ``rate_hz`` too).
    """
    return [topic_param(topic_id, CONFIG_FIELD_PARAMS.get(field, field)) for field in fields]


def all_names(topic_ids: Iterable[str]) -> list[str]:
    """Names of every parameter this module declares for ``topic_ids``."""
    names = [TOPICS, USE_SIM_TIME, *_GLOBALS]
    for topic_id in topic_ids:
        names += [topic_param(topic_id, spec.name) for spec in TOPIC_SPECS]
    return names


# -- topics discovered in the graph (all_topics) ----------------------------------------------

ALL_TOPICS = 'all_topics'
ALL_TOPICS_PREFIX = ALL_TOPICS + '.'
TEMPLATE_SPECS: tuple[ParamSpec, ...] = tuple(s for s in TOPIC_SPECS if s.name != 'name')
"""Per-topic settings shared by every discovered topic, as ``all_topics.<field>``.

One set for all of them: a robot's thousand topics must not make a thousand times fifteen
parameters (``ros2 param dump`` would be unreadable, and each parameter costs memory).
"""


_OWN_NAMES = frozenset([TOPICS, USE_SIM_TIME, *_GLOBALS])
_OWN_PREFIXES = ('topic.', CLOCK_PREFIX, ALL_TOPICS_PREFIX)
_STRICT_PREFIXES = ('topic.', 'clock.', ALL_TOPICS_PREFIX)
"""Where an unknown name is a typo, never another node's parameter (``unknown_own_parameters``)."""


def template_param(field: str) -> str:
    """Full parameter name of a setting of every discovered topic, e.g. ``all_topics.stamp``."""
    return ALL_TOPICS_PREFIX + field


def is_monitor_parameter(name: str) -> bool:
    """Tell whether a parameter is the monitor's own, to check and apply when it is set.

    Libraries declare theirs on the same node: ``diagnostic_updater`` declares
    ``diagnostic_updater.period`` while the monitor is being built, rclpy
    ``start_type_description_service``. The monitor leaves those to their owners.
    """
    return name in _OWN_NAMES or name.startswith(_OWN_PREFIXES)


def template_names() -> list[str]:
    """Names of the ``all_topics.*`` parameters (declared when ``all_topics`` is true)."""
    return [template_param(spec.name) for spec in TEMPLATE_SPECS]


def discovered_config(topic_id: str, topic: str, template: Mapping[str, Any],
                      use_sim_time: bool) -> TopicConfig:
    """Build the config of a topic found in the graph from the ``all_topics.*`` values.

    ``topic`` is fully qualified already (a graph name). Errors name the template parameter.
    """
    values = {topic_param(topic_id, name[len(ALL_TOPICS_PREFIX):]): value
              for name, value in template.items() if name.startswith(ALL_TOPICS_PREFIX)}
    values[topic_param(topic_id, 'name')] = topic
    try:
        return topic_config_from(topic_id, values, use_sim_time)
    except ConfigError as err:
        raise ConfigError(str(err).replace(f'topic.{topic_id}.', ALL_TOPICS_PREFIX)) from None
