"""The monitor's YAML parameter file, read without ROS, for the offline analyzer.

The analyzer takes the same ``--params-file`` YAML as the live node, so one file describes
the topics for both. The layout is ROS 2's: ``<node>: ros__parameters: {...}`` with per-topic
settings under identifier keys (``topics: [cmd]``, ``topic.cmd.name: /demo/cmd``,
``topic.cmd.period_ms: 10.0``; nested mappings are joined with dots as rcl does). The
meaning of every key follows ``shell/parameters.py`` (0 means "default"; ``auto`` for rule and
clock). That module imports rclpy, which the analyzer must not, so the conversion is
repeated here for the keys that matter offline; the tests check both agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any

from ros2_deadline_monitor.core.config import (
    AnalysisConfig,
    check_topic_name,
    CLOCKS,
    DEFAULT_JITTER_FRACTION,
    duration_ns,
    NS_PER_MS,
    NS_PER_S,
    RULES,
    STAMPS,
    Thresholds,
    TopicConfig,
)
from ros2_deadline_monitor.core.errors import ConfigError

__all__ = ['AUTO', 'FileConfig', 'flatten', 'load_config', 'parse_parameters']

NODE_NAME = 'deadline_monitor'
AUTO = 'auto'
TOPIC_FIELDS = frozenset({
    'name', 'period_ms', 'rate_hz', 'deadline_ms', 'jitter_tolerance_ms',
    'jitter_tolerance_percent', 'rule', 'stamp', 'clock', 'wall_budget_ms', 'timeout_s',
    'qos_deadline_ms',
})
_DEFAULT_ANALYSIS = AnalysisConfig()
_DEFAULT_THRESHOLDS = Thresholds()
_MIN_RATE_HZ = 1 / 3600


@dataclass(frozen=True)
class FileConfig:
    """What the analyzer takes from a parameter file.

    ``clocks`` holds the identifiers whose clock was ``auto`` (the analyzer decides from the
    bag); ``clock_topic`` is the node's ``clock_topic``; ``warnings`` names keys that look
    like typos (``topic.<id>.<unknown field>``).
    """

    path: str
    node: str
    topics: tuple[TopicConfig, ...]
    auto_clock: frozenset[str]
    analysis: AnalysisConfig
    clock_topic: str
    use_sim_time: bool | None
    warnings: tuple[str, ...]


def flatten(params: Mapping[str, Any], prefix: str = '') -> dict[str, Any]:
    """Join nested mappings with dots, as rcl does for parameter files."""
    flat: dict[str, Any] = {}
    for key, value in params.items():
        name = f'{prefix}{key}'
        if isinstance(value, Mapping):
            flat.update(flatten(value, f'{name}.'))
        else:
            flat[name] = value
    return flat


def _node_sections(document: Any, path: str) -> tuple[str, dict[str, Any]]:
    """Pick the node's parameters: ``/**`` first, overlaid by the node's own section."""
    if not isinstance(document, Mapping):
        raise ConfigError(f'{path}: expected a mapping of node names to ros__parameters')
    sections = {str(k): v['ros__parameters'] for k, v in document.items()
                if isinstance(v, Mapping) and isinstance(v.get('ros__parameters'), Mapping)}
    if not sections:
        raise ConfigError(f'{path}: no "<node>: ros__parameters:" section found')
    wildcard = {k: v for k, v in sections.items() if k in ('/**', '**')}
    named = {k: v for k, v in sections.items() if k not in wildcard}
    own = [k for k in named if k.rstrip('/').rsplit('/', 1)[-1] == NODE_NAME]
    if len(own) > 1:
        raise ConfigError(f'{path}: several sections for {NODE_NAME}: {own}')
    if not own and len(named) > 1:
        raise ConfigError(f'{path}: no section for {NODE_NAME} among {sorted(named)}')
    chosen = own[0] if own else next(iter(named), next(iter(wildcard)))
    values: dict[str, Any] = {}
    for params in wildcard.values():
        values.update(flatten(params))
    if chosen in named:
        values.update(flatten(named[chosen]))
    return chosen, values


def load_config(path: str | Path) -> FileConfig:
    """Read a parameter file; raise ``ConfigError`` naming the file and the key."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise ConfigError(f'cannot read config {path}: {err.strerror or err}') from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, 'problem_mark', None)
        where = f' (line {mark.line + 1})' if mark is not None else ''
        raise ConfigError(f'{path}: not valid YAML{where}') from None
    node, values = _node_sections(document, str(path))
    try:
        return parse_parameters(values, str(path), node)
    except ConfigError as err:
        raise ConfigError(f'{path}: {err}') from None


def _get(values: Mapping[str, Any], name: str, default: Any) -> Any:
    value = values.get(name)
    return default if value is None else value


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f'{name} must be a number, got {value!r}')
    return float(value)


def _is_set(name: str, value: float) -> bool:
    """Return False for 0 (= use the default); reject NaN, infinities and negatives."""
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise ConfigError(f'{name} must be a finite number ≥ 0, got {value}')
    return value != 0


def _optional_ms(name: str, value: Any) -> int | None:
    number = _number(name, value)
    return duration_ns(name, number, NS_PER_MS) if _is_set(name, number) else None


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ConfigError(f'{name} must be one of {", ".join(choices)}, got {value!r}')
    return value


def _resolve(topic: str, namespace: str) -> str:
    """Expand a relative or private name the way the node would in ``namespace``."""
    if topic.startswith('~'):
        return f'{namespace.rstrip("/")}/{NODE_NAME}{topic[1:]}'
    if not topic.startswith('/'):
        return f'{namespace.rstrip("/")}/{topic}'
    return topic


def _topic_config(topic_id: str, values: Mapping[str, Any], namespace: str
                  ) -> tuple[TopicConfig, bool]:
    """Build the ``TopicConfig`` of one identifier; tell whether its clock is ``auto``."""
    def key(field: str) -> str:
        return f'topic.{topic_id}.{field}'

    def get(field: str, default: Any) -> Any:
        return _get(values, key(field), default)

    topic = get('name', topic_id)
    if not isinstance(topic, str):
        raise ConfigError(f'{key("name")} must be a string, got {topic!r}')
    try:
        check_topic_name(topic)
    except ConfigError as err:
        raise ConfigError(f'{key("name")}: {err}') from None
    period_ns = _optional_ms(key('period_ms'), get('period_ms', 0.0))
    rate_hz = _number(key('rate_hz'), get('rate_hz', 0.0))
    if _is_set(key('rate_hz'), rate_hz):
        if period_ns is not None:
            raise ConfigError(f'{key("period_ms")} and {key("rate_hz")} are both set; set one '
                              'of them to 0')
        if rate_hz < _MIN_RATE_HZ:
            raise ConfigError(f'{key("rate_hz")} must be at least 1/3600 Hz, got {rate_hz}')
        period_ns = round(NS_PER_S / rate_hz)
    jitter_ns = _optional_ms(key('jitter_tolerance_ms'), get('jitter_tolerance_ms', 0.0))
    percent = _number(key('jitter_tolerance_percent'),
                      get('jitter_tolerance_percent', 100 * DEFAULT_JITTER_FRACTION))
    if math.isnan(percent) or not 0 <= percent <= 100:
        raise ConfigError(f'{key("jitter_tolerance_percent")} must be within [0, 100], got '
                          f'{percent}')
    if jitter_ns is None and percent != 100 * DEFAULT_JITTER_FRACTION:
        if period_ns is None:
            raise ConfigError(f'{key("jitter_tolerance_percent")}: only the default '
                              f'{100 * DEFAULT_JITTER_FRACTION:g} % applies to a learned '
                              f'period; set {key("period_ms")} or {key("jitter_tolerance_ms")}')
        jitter_ns = round(period_ns * percent / 100)
    rule = _choice(key('rule'), get('rule', AUTO), (AUTO, *RULES))
    clock = _choice(key('clock'), get('clock', AUTO), (AUTO, *CLOCKS))
    timeout_s = _number(key('timeout_s'), get('timeout_s', 0.0))
    config = TopicConfig(
        name=topic_id,
        topic=_resolve(topic, namespace),
        period_ns=period_ns,
        deadline_ns=_optional_ms(key('deadline_ms'), get('deadline_ms', 0.0)),
        jitter_tolerance_ns=jitter_ns,
        rule=None if rule == AUTO else rule,
        stamp=_choice(key('stamp'), get('stamp', STAMPS[0]), STAMPS),
        clock='wall' if clock == AUTO else clock,
        wall_budget_ns=_optional_ms(key('wall_budget_ms'), get('wall_budget_ms', 0.0)),
        timeout_ns=(duration_ns(key('timeout_s'), timeout_s, NS_PER_S)
                    if _is_set(key('timeout_s'), timeout_s) else None),
        qos_deadline_ns=_optional_ms(key('qos_deadline_ms'), get('qos_deadline_ms', 0.0)),
    )
    return config, clock == AUTO


def _analysis(values: Mapping[str, Any]) -> AnalysisConfig:
    def number(name: str, default: float) -> float:
        return _number(name, _get(values, name, default))

    def integer(name: str, default: int) -> int:
        value = _get(values, name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f'{name} must be an integer, got {value!r}')
        return value

    thresholds = Thresholds(
        miss_ratio_error=number('miss_ratio_error', _DEFAULT_THRESHOLDS.miss_ratio_error),
        rtf_warn_fraction=number('rtf_warn_fraction', _DEFAULT_THRESHOLDS.rtf_warn_fraction),
        rtf_error_fraction=number('rtf_error_fraction', _DEFAULT_THRESHOLDS.rtf_error_fraction),
        clock_timeout_ns=duration_ns(
            'clock_timeout_s',
            number('clock_timeout_s', _DEFAULT_THRESHOLDS.clock_timeout_ns / NS_PER_S),
            NS_PER_S))
    return AnalysisConfig(
        window_ns=duration_ns('window_s', number('window_s', _DEFAULT_ANALYSIS.window_ns / 1e9),
                              NS_PER_S),
        window_cycles=integer('window_cycles', _DEFAULT_ANALYSIS.window_cycles),
        learn_intervals=integer('learn_intervals', _DEFAULT_ANALYSIS.learn_intervals),
        target_rtf=number('target_rtf', _DEFAULT_ANALYSIS.target_rtf),
        rtf_bin_ns=duration_ns('rtf_bin_s', number('rtf_bin_s',
                                                   _DEFAULT_ANALYSIS.rtf_bin_ns / 1e9), NS_PER_S),
        thresholds=thresholds,
    )


def parse_parameters(values: Mapping[str, Any], path: str = '<parameters>',
                     node: str = NODE_NAME) -> FileConfig:
    """Convert flat ``{name: value}`` node parameters into the analyzer's configuration."""
    ids = values.get('topics') or []
    if isinstance(ids, str) or not isinstance(ids, list):
        raise ConfigError(f'topics must be a list of identifiers, got {ids!r}')
    namespace = node.rsplit('/', 1)[0] if node.count('/') > 1 else '/'
    configs = []
    auto = set()
    seen: dict[str, str] = {}
    for topic_id in ids:
        if not isinstance(topic_id, str):
            raise ConfigError(f'topics: identifier {topic_id!r} must be a string')
        if topic_id in {c.name for c in configs}:
            raise ConfigError(f'topics: identifier {topic_id!r} is listed twice')
        config, is_auto = _topic_config(topic_id, values, namespace)
        if config.topic in seen:
            raise ConfigError(f'topic.{topic_id}.name: {config.topic} is already monitored as '
                              f'{seen[config.topic]!r}')
        seen[config.topic] = topic_id
        configs.append(config)
        if is_auto:
            auto.add(topic_id)
    warnings = []
    for name in sorted(values):
        parts = name.split('.')
        if len(parts) == 3 and parts[0] == 'topic':
            if parts[2] not in TOPIC_FIELDS:
                warnings.append(f'{name}: unknown setting, ignored')
            elif parts[1] not in ids:
                warnings.append(f'{name}: {parts[1]!r} is not listed in topics, ignored')
    clock_topic = _get(values, 'clock_topic', '/clock')
    try:
        check_topic_name(clock_topic)
    except ConfigError as err:
        raise ConfigError(f'clock_topic: {err}') from None
    use_sim_time = values.get('use_sim_time')
    return FileConfig(
        path=path,
        node=node,
        topics=tuple(configs),
        auto_clock=frozenset(auto),
        analysis=_analysis(values),
        clock_topic=_resolve(clock_topic, namespace),
        use_sim_time=bool(use_sim_time) if use_sim_time is not None else None,
        warnings=tuple(warnings),
    )
