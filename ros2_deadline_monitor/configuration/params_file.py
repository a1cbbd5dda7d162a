"""The monitor's YAML parameter file, read without ROS, for the offline analyzer.

The analyzer takes the same ``--params-file`` YAML as the live node, so one file describes
the topics for both. The layout is ROS 2's: ``<node>: ros__parameters: {...}`` with per-topic
settings under identifier keys (``topics: [cmd]``, ``topic.cmd.name: /demo/cmd``,
``topic.cmd.period_ms: 10.0``; nested mappings are joined with dots as rcl does). The values
are converted by ``configuration/parameters.py``, the same code the node uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.expectations import (
    Expectations,
    expectations_from,
    is_expectation,
)
from ros2_deadline_monitor.configuration.parameters import (
    all_names,
    AUTO,
    check_unique_topics,
    did_you_mean,
    parse_topic_ids,
    settings_from,
    template_param,
    TEMPLATE_SPECS,
    topic_config_from,
    topic_param,
    TOPIC_SPECS,
    TOPICS,
    USE_SIM_TIME,
)

__all__ = ['AUTO', 'FileConfig', 'flatten', 'load_config', 'parse_parameters']

NODE_NAME = 'deadline_monitor'
TOPIC_FIELDS = frozenset(spec.name for spec in TOPIC_SPECS)
LIBRARY_PREFIXES = ('qos_overrides.', 'diagnostic_updater.')
"""Parameters of rclpy and diagnostic_updater a file may set for the live node: not checked."""


@dataclass(frozen=True)
class FileConfig:
    """What the analyzer takes from a parameter file.

    ``clocks`` holds the identifiers whose clock was ``auto`` (the analyzer decides from the
    bag); ``clock_topic`` is the node's ``clock_topic``; ``warnings`` names settings of
    topics not listed in ``topics`` (ignored, as by the live node); ``expectations`` holds
    the ``topic.<id>.expect.*`` and ``clock.expect.*`` limits. An unknown parameter (a typo)
    is an error, not a warning: analyzed without it, a bag's figures would silently rest on
    a default (a period learned instead of the one meant).
    """

    path: str
    node: str
    topics: tuple[TopicConfig, ...]
    auto_clock: frozenset[str]
    analysis: AnalysisConfig
    clock_topic: str
    use_sim_time: bool | None
    warnings: tuple[str, ...]
    expectations: Expectations = Expectations()


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
        raise type(err)(f'{path}: {err}') from None


def _resolve(topic: str, namespace: str) -> str:
    """Expand a relative or private name the way the node would in ``namespace``."""
    if topic.startswith('~'):
        return f'{namespace.rstrip("/")}/{NODE_NAME}{topic[1:]}'
    if not topic.startswith('/'):
        return f'{namespace.rstrip("/")}/{topic}'
    return topic


def parse_parameters(values: Mapping[str, Any], path: str = '<parameters>',
                     node: str = NODE_NAME) -> FileConfig:
    """Convert flat ``{name: value}`` node parameters into the analyzer's configuration."""
    ids = values.get(TOPICS) or []
    if isinstance(ids, str) or not isinstance(ids, list):
        raise ConfigError(f'{TOPICS} must be a list of identifiers, got {ids!r}')
    ids = parse_topic_ids(ids)
    namespace = node.rsplit('/', 1)[0] if node.count('/') > 1 else '/'

    def resolve(topic: str) -> str:
        return _resolve(topic, namespace)

    configs = [topic_config_from(topic_id, values, use_sim_time=False, resolve=resolve)
               for topic_id in ids]
    check_unique_topics(configs)
    expectations = expectations_from(values, ids)
    auto = {topic_id for topic_id in ids
            if values.get(topic_param(topic_id, 'clock'), AUTO) == AUTO}
    warnings = []
    known = {*all_names(ids), *(template_param(spec.name) for spec in TEMPLATE_SPECS)}
    unknown = []
    for name in sorted(values):
        parts = name.split('.')
        if name in known or is_expectation(name) or name.startswith(LIBRARY_PREFIXES):
            continue
        if (len(parts) == 3 and parts[0] == 'topic' and parts[1] not in ids
                and parts[2] in TOPIC_FIELDS):
            warnings.append(f'{name}: {parts[1]!r} is not listed in topics, ignored')
        else:
            unknown.append(f'unknown parameter {name}{did_you_mean(name, known)}')
    if unknown:
        raise ConfigError('; '.join(unknown))
    settings = settings_from(values)
    use_sim_time = values.get(USE_SIM_TIME)
    return FileConfig(
        path=path,
        node=node,
        topics=tuple(configs),
        auto_clock=frozenset(auto),
        analysis=settings.analysis,
        clock_topic=resolve(settings.clock_topic),
        use_sim_time=bool(use_sim_time) if use_sim_time is not None else None,
        warnings=tuple(warnings),
        expectations=expectations,
    )
