"""``monitor --all``: finding the topics to monitor in the graph, now and later.

One ``get_topic_names_and_types()`` per poll finds the names; only a name seen for the first
time (or one that had no publisher yet) costs more, one ``count_publishers``. A topic is
adopted once it has a publisher (a name that only subscribers use has no cycle to measure
yet) and is never dropped: when its publishers vanish it stays monitored and times out like
any configured topic, so a dead producer is reported rather than forgotten.

Discovered topics get their settings from the read-only ``all_topics.*`` parameters (one set
for all, see ``configuration/parameters.py``) and identifiers made from their names as on the
command line (``/arm/joint_states`` -> ``arm_joint_states``); they are not added to ``topics``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from rclpy.node import Node

from ros2_deadline_monitor.analysis.config import TopicConfig
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.excluded_topics import excluded_reason, EXCLUDED_TOPICS
from ros2_deadline_monitor.configuration.parameters import discovered_config, template_names
from ros2_deadline_monitor.configuration.topic_flags import topic_id
from ros2_deadline_monitor.live.parameter_declarations import current_values, declare_template


class TopicDiscovery:
    """The topics ``all_topics`` adds: found by ``poll``, configured from one template."""

    def __init__(self, node: Node, template: Mapping[str, Any], *, clock_topic: str,
                 use_sim_time: bool) -> None:
        """Watch ``node``'s graph; ``template`` holds the ``all_topics.*`` values."""
        self._node = node
        self._template = dict(template)
        self._clock_topic = clock_topic
        self._own = node.get_fully_qualified_name()
        self._infrastructure = {node.resolve_topic_name(name) for name in EXCLUDED_TOPICS}
        """The infrastructure topics as remapped for this node (``-r /diagnostics:=...``)."""
        self._use_sim_time = use_sim_time
        self._ids: dict[str, str] = {}
        """Adopted topic name -> identifier."""
        self._excluded: set[str] = set()
        self.configs: dict[str, TopicConfig] = {}
        """Identifier -> config of every adopted topic, in the order they were found."""

    def check_template(self) -> None:
        """Raise ``ConfigError`` when the ``all_topics.*`` values are invalid."""
        discovered_config('check', '/check', self._template, self._use_sim_time)

    def poll(self, configured: Mapping[str, str],
             names_and_types: Iterable[tuple[str, list[str]]] | None = None) -> list[str]:
        """Adopt the topics that appeared since the last poll; return their identifiers.

        ``configured`` maps the identifiers of explicitly configured topics to their names:
        those topics keep their own settings and are not adopted, and their identifiers are
        not reused. ``names_and_types``: the graph as the caller just read it (None: read it).
        """
        explicit = set(configured.values())
        added = []
        if names_and_types is None:
            names_and_types = self._node.get_topic_names_and_types()
        for name, types in names_and_types:
            if name in self._ids or name in self._excluded or name in explicit:
                continue
            if name in self._infrastructure or excluded_reason(
                    name, types, clock_topic=self._clock_topic,
                    own_namespace=self._own) is not None:
                self._excluded.add(name)
                continue
            if self._node.count_publishers(name) == 0:
                continue  # only subscribers so far: checked again at the next poll
            added.append(self._adopt(name, configured.keys()))
        return added

    def _adopt(self, name: str, configured_ids: Collection[str]) -> str:
        taken = set(self.configs) | set(configured_ids)
        new_id = topic_id(name, taken)
        self._ids[name] = new_id
        self.configs[new_id] = discovered_config(new_id, name, self._template,
                                                 self._use_sim_time)
        return new_id

    def desired(self, explicit: Mapping[str, TopicConfig],
                use_sim_time: bool) -> dict[str, TopicConfig]:
        """Return the explicit configs plus the adopted ones that do not clash with them.

        An explicit topic wins over an adopted one of the same name or identifier (its own
        settings are what the user asked for). ``use_sim_time`` re-resolves the clock.
        """
        if use_sim_time != self._use_sim_time:
            self._use_sim_time = use_sim_time
            self.configs = {topic_id_: discovered_config(topic_id_, config.topic,
                                                         self._template, use_sim_time)
                            for topic_id_, config in self.configs.items()}
        names = {config.topic for config in explicit.values()}
        merged = dict(explicit)
        merged.update((topic_id_, config) for topic_id_, config in self.configs.items()
                      if config.topic not in names and topic_id_ not in explicit)
        return merged


def create_discovery(node: Node, clock_topic: str, use_sim_time: bool) -> TopicDiscovery:
    """Declare the ``all_topics.*`` settings on ``node``; return its checked graph watcher.

    Raises ``ConfigError`` when a setting cannot be declared or is invalid.
    """
    errors = declare_template(node)
    if errors:
        raise ConfigError('invalid parameter value: ' + '; '.join(errors))
    discovery = TopicDiscovery(node, current_values(node, template_names()),
                               clock_topic=node.resolve_topic_name(clock_topic),
                               use_sim_time=use_sim_time)
    discovery.check_template()
    return discovery
