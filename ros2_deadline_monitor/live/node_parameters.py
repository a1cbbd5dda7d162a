"""The monitor's parameters on its node: declared, checked, and turned into configs.

``parameter_declarations.py`` declares them with descriptors; ``configuration/parameters.py``
says what they mean. This module keeps what the node learns about them over its life: topics
skipped at start-up, values that could not be declared, topics whose settings are invalid, so
that a bad entry never stops the good ones and a later ``ros2 param set`` can repair it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
import re
import time
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.exceptions import ParameterNotDeclaredException
from rclpy.node import Node
from rclpy.parameter import Parameter

from ros2_deadline_monitor.analysis.config import TopicConfig
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.expectations import (
    expectation_names,
    Expectations,
    expectations_from,
    is_expectation,
)
from ros2_deadline_monitor.configuration.parameters import (
    all_names,
    check_change,
    desired_topics,
    GLOBAL_SPECS,
    is_monitor_parameter,
    MonitorSettings,
    parse_topic_ids,
    settings_from,
    split_topic_param,
    TOPICS,
    unknown_own_parameters,
    unknown_parameter_warnings,
    USE_SIM_TIME,
)
from ros2_deadline_monitor.live.parameter_declarations import (
    coerce_integers,
    current_values,
    declare_expectations,
    declare_globals,
    declare_topic,
    undeclare_expectations,
    undeclare_topic,
)

GLOBAL_NAMES = frozenset(spec.name for spec in GLOBAL_SPECS)


class NoLongerMonitored(ParameterNotDeclaredException):
    """A set of a parameter of a topic removed from ``topics``: says so, not rclpy's words.

    rclpy's parameter service answers an undeclared parameter with the exception's text
    ("Invalid access to undeclared parameter(s): []" before); this one's is the reason.
    """

    def __init__(self, text: str) -> None:
        """Carry ``text`` as the whole message."""
        Exception.__init__(self, text)  # not ParameterException's "<what>: <names>"


def removed_topic_id(name: str) -> str | None:
    """Return the identifier of a ``topic.<id>.*`` parameter name (a setting or a limit)."""
    parts = name.split('.')
    return parts[1] if len(parts) >= 3 and parts[0] == 'topic' else None


class NodeParameters:
    """The parameters of one monitor node and what is wrong with them."""

    def __init__(self, node: Node) -> None:
        """Work on ``node``'s parameters; nothing is declared yet."""
        self._node = node
        self._declaring = False
        self.skipped: dict[str, str] = {}
        """Entries of ``topics`` dropped at start-up (not identifiers, repeated), with why."""
        self._declare_errors: dict[str, dict[str, str]] = {}
        self.invalid: dict[str, str] = {}
        """Listed topics whose settings are invalid, with why."""
        self._declared: set[str] = set()
        self.removed: dict[str, str] = {}
        """Topics removed from ``topics`` at run time, with when (local time, for a message)."""
        self._expectations: Expectations | None = None
        """The expectations as last read; None once a parameter was declared or set since."""

    def _declare(self, declare: Callable[..., list[str]], *args: Any) -> list[str]:
        self._declaring = True
        try:
            return declare(self._node, *args)
        finally:
            self._declaring = False
            self._expectations = None

    def declare_globals(self) -> list[str]:
        """Declare ``topics`` and the monitor-wide parameters; return declaration errors."""
        return self._declare(declare_globals)

    def settings(self) -> MonitorSettings:
        """Return the monitor-wide settings (raises ``ConfigError`` when invalid)."""
        return settings_from(current_values(self._node, GLOBAL_NAMES))

    def use_sim_time(self) -> bool:
        """Tell whether the node follows /clock."""
        return bool(self._node.get_parameter(USE_SIM_TIME).value)

    def topic_ids(self) -> list[str]:
        """Return the identifiers listed in ``topics``."""
        return list(self._node.get_parameter(TOPICS).value or [])

    def declare_startup_topics(self) -> list[str]:
        """Declare the listed topics' parameters; skip (and report) entries that are bad.

        At start-up a bad entry (not an identifier, listed twice) must not stop the
        monitoring of the good ones; ``topics`` is set to the valid list. At run time a bad
        list is rejected instead (``validate``).
        """
        valid: list[str] = []
        for topic_id in self.topic_ids():
            try:
                parse_topic_ids([*valid, topic_id])
            except ConfigError as err:
                self.skipped[str(topic_id)] = str(err)
                self._node.get_logger().error(f'topic {topic_id!r} is not monitored: {err}')
                continue
            valid.append(topic_id)
        if self.skipped:
            self._node.set_parameters([Parameter(TOPICS, Parameter.Type.STRING_ARRAY, valid)])
        for topic_id in valid:
            self._declare_topic(topic_id)
        # Every expectation given, as given: a typo must stop a CI run, not pass it
        # (raises ExpectationError).
        expectations_from({name: p.value for name, p in self._node._parameter_overrides.items()
                           if is_expectation(name)}, valid)
        self._declare(declare_expectations, valid)
        return valid

    def refuse_unknown(self) -> None:
        """Raise ``ConfigError`` for given parameters under the monitor's prefixes nobody declared.

        A typo there (``topic.cmd.perod_ms``) would drop a check without a word; call it once
        the listed topics' parameters are declared (``declare_startup_topics``).
        """
        refused = unknown_own_parameters(self._node._parameter_overrides,  # no getters
                                         self._node._parameters, self.topic_ids())
        if refused:
            raise ConfigError('; '.join(refused))

    def warn_unknown(self) -> None:
        """Log the given parameters nothing declared (typos), once the libraries declared theirs.

        Call it after ``diagnostic_updater`` declared its parameters on the node.
        """
        for warning in unknown_parameter_warnings(
                self._node._parameter_overrides, self._node._parameters,  # no getters
                self.topic_ids()):
            self._node.get_logger().warning(warning)

    def _declare_topic(self, topic_id: str) -> None:
        self._declared.add(topic_id)
        errors = self._declare(declare_topic, topic_id)
        if errors:
            self._declare_errors[topic_id] = {e.split(':', 1)[0]: e for e in errors}

    def desired(self) -> dict[str, TopicConfig]:
        """Configs of the valid listed topics; ``invalid`` is updated (and logged when new)."""
        topic_ids = self.topic_ids()
        desired, invalid = desired_topics(
            topic_ids, current_values(self._node, all_names(topic_ids)), self.use_sim_time(),
            self._node.resolve_topic_name, self._declare_errors)
        for topic_id, reason in invalid.items():
            if self.invalid.get(topic_id) != reason:
                self._node.get_logger().error(f'topic {topic_id!r} is not monitored: {reason}')
        self.invalid = invalid
        return desired

    def invalid_reasons(self) -> dict[str, str]:
        """Every topic not monitored, by a status-name-safe identifier, with why."""
        # No '/' in a status name (rqt_robot_monitor splits on it).
        skipped = {re.sub(r'\W', '_', k): v for k, v in self.skipped.items()}
        return {**self.invalid, **skipped}

    def route_changes(self, validate: Callable[[list[Parameter]], SetParametersResult],
              apply: Callable[[list[Parameter]], None]) -> None:
        """Route ``ros2 param set`` through ``coerce_integers``, ``validate`` and ``apply``.

        Only the monitor's own parameters go through (``is_monitor_parameter``): a library's
        parameter declared on this node (``diagnostic_updater.period``, while the monitor is
        still being built) is accepted and left alone.
        """
        def own(parameters: list[Parameter]) -> list[Parameter]:
            return ([] if self._declaring
                    else [p for p in parameters if is_monitor_parameter(p.name)])

        def on_set(parameters: list[Parameter]) -> SetParametersResult:
            mine = own(parameters)
            return validate(mine) if mine else SetParametersResult(successful=True)

        def post_set(parameters: list[Parameter]) -> None:
            mine = own(parameters)
            if mine:
                apply(mine)

        self._node.add_pre_set_parameters_callback(self._refuse_removed)
        self._node.add_on_set_parameters_callback(on_set)
        self._node.add_post_set_parameters_callback(post_set)

    def _refuse_removed(self, parameters: list[Parameter]) -> list[Parameter]:
        """Say that a removed topic is no longer monitored; coerce integers for the rest."""
        for parameter in parameters:
            topic_id = removed_topic_id(parameter.name)
            if (topic_id in self.removed and topic_id not in self.topic_ids()
                    and not self._node.has_parameter(parameter.name)):
                raise NoLongerMonitored(
                    f'{parameter.name}: topic {topic_id!r} is no longer monitored (removed '
                    f'from {TOPICS} at {self.removed[topic_id]}); list it in {TOPICS} again '
                    'to set its parameters')
        return coerce_integers(parameters)

    def expectations(self) -> Expectations:
        """Return the expectations in force (``topic.<id>.expect.*``, ``clock.expect.*``).

        Read again only after a parameter was declared or set (``applied``): reading a
        thousand topics' parameters at every report would cost more than the report.
        """
        if self._expectations is None:
            topic_ids = self.topic_ids()
            self._expectations = expectations_from(
                current_values(self._node, expectation_names(topic_ids)), topic_ids)
        return self._expectations

    def validate(self, parameters: list[Parameter]) -> SetParametersResult:
        """Reject a change that would give an invalid configuration; nothing is applied."""
        changed = {p.name: p.value for p in parameters}
        try:
            check_change(current_values(self._node, all_names(self.topic_ids())), changed,
                         self.invalid, self._node.resolve_topic_name)
            limits = {name: value for name, value in changed.items() if is_expectation(name)}
            if limits:
                expectations_from(limits, changed.get(TOPICS, self.topic_ids()))
        except ConfigError as err:
            return SetParametersResult(successful=False, reason=str(err))
        return SetParametersResult(successful=True)

    def applied(self, names: Iterable[str]) -> bool:
        """Bookkeeping after an accepted change; return True when a global setting changed.

        Repaired values are forgotten as errors; a new ``topics`` list declares the new
        topics' parameters and undeclares those of topics no longer listed, so
        ``ros2 param dump`` shows only what is in force.
        """
        names = set(names)
        self._expectations = None
        for name in names:
            split = split_topic_param(name)
            if split and split[0] in self._declare_errors:
                self._declare_errors[split[0]].pop(name, None)
                if not self._declare_errors[split[0]]:
                    del self._declare_errors[split[0]]
        if TOPICS in names:
            self.skipped.clear()
            listed = self.topic_ids()
            for topic_id in listed:
                self._declare_topic(topic_id)
            self._declare(declare_expectations, listed)
            for topic_id in self._declared - set(listed):
                self.removed[topic_id] = time.strftime('%H:%M:%S')
                self._declare(undeclare_topic, topic_id)
                self._declare(undeclare_expectations, topic_id)
                self._declared.discard(topic_id)
                self._declare_errors.pop(topic_id, None)
        return bool(GLOBAL_NAMES & names)
