"""Declaring the monitor's parameters on the node, with descriptors.

What the parameters mean, and their conversion to configs, lives in ``configuration/parameters.py``
(no ROS import, shared with the offline analyzer); this module adds what needs rclpy: the
``ParameterDescriptor`` that ``ros2 param describe`` shows, declarations that report bad
overrides instead of failing, and reading values back from the node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import (
    InvalidParameterTypeException,
    ParameterException,
    ParameterUninitializedException,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

from ros2_deadline_monitor.configuration.expectations import (
    CLOCK_LIMITS,
    CLOCK_PREFIX,
    LimitSpec,
    NULL_SPELLINGS,
    topic_expectation_prefix,
    TOPIC_LIMITS,
)
from ros2_deadline_monitor.configuration.parameters import (
    GLOBAL_SPECS,
    is_double,
    ParamSpec,
    template_param,
    TEMPLATE_SPECS,
    topic_default,
    topic_param,
    TOPIC_SPECS,
    TOPICS,
)
from ros2_deadline_monitor.outputs.optional import diagnostic_updater


def descriptor(spec: ParamSpec, full_name: str) -> ParameterDescriptor:
    """Build the ``ParameterDescriptor`` that ``ros2 param describe`` shows."""
    text = spec.description
    constraints = spec.constraints
    if spec.choices:
        constraints = 'one of: ' + ', '.join(spec.choices)
    descriptor = ParameterDescriptor(
        name=full_name, description=text, additional_constraints=constraints,
        read_only=spec.read_only)
    if spec.low is not None and spec.high is not None:
        if isinstance(spec.default, float):
            descriptor.floating_point_range = [
                FloatingPointRange(from_value=float(spec.low), to_value=float(spec.high))]
        else:
            descriptor.integer_range = [
                IntegerRange(from_value=int(spec.low), to_value=int(spec.high), step=1)]
    return descriptor


def declare_globals(node: Node) -> list[str]:
    """Declare the ``topics`` list and the monitor-wide parameters; return declaration errors.

    A value from ``--params-file`` or ``-p`` that does not fit (wrong type, out of range) is
    reported and the default declared instead, so the caller can decide whether to go on.
    """
    errors = []
    # `ros2 node info` of the monitor lists no subscriptions: say where they are.
    topics_descriptor = ParameterDescriptor(
        name=TOPICS,
        description='Identifiers of the monitored topics; each has its settings under '
                    'topic.<identifier>.* (an empty list monitors only the clock). Their '
                    'subscriptions (and /clock) are on the node '
                    f'{node.get_fully_qualified_name()}_reader when taken in batches '
                    '(take_period_s > 0): ros2 node info there.')
    try:
        node.declare_parameter(TOPICS, Parameter.Type.STRING_ARRAY, topics_descriptor)
    except ParameterException as err:
        errors.append(f'{TOPICS}: {err}')
        node.declare_parameter(TOPICS, Parameter.Type.STRING_ARRAY, topics_descriptor,
                               ignore_override=True)
    try:
        node.get_parameter(TOPICS)
    except ParameterUninitializedException:
        # An empty list cannot be a declared default (its type cannot be inferred): set it.
        node.set_parameters([Parameter(TOPICS, Parameter.Type.STRING_ARRAY, [])])
    for spec in GLOBAL_SPECS:
        if spec.name == USE_DIAGNOSTIC_UPDATER and diagnostic_updater is None:
            _declare_without_updater(node, spec)
        else:
            errors += _declare(node, spec.name, spec.default, spec)
    return errors


USE_DIAGNOSTIC_UPDATER = 'use_diagnostic_updater'


def _declare_without_updater(node: Node, spec: ParamSpec) -> None:
    """Declare ``use_diagnostic_updater`` false where diagnostic_updater is not installed.

    The parameter says what happens (``ros2 param dump`` showed ``true`` while the log said
    the statuses were published directly); a ``true`` asked for is named in a warning.
    """
    asked = node._parameter_overrides.get(spec.name)  # rclpy has no public getter
    node.declare_parameter(spec.name, False, descriptor(spec, spec.name), ignore_override=True)
    if asked is not None and asked.value is True:
        node.get_logger().warning(
            f'{spec.name}: true asked, but diagnostic_updater is not installed: the monitor '
            'publishes /diagnostics itself (the parameter reads false)')


def declare_topic(node: Node, topic_id: str) -> list[str]:
    """Declare the ``topic.<id>.*`` parameters not declared yet; return declaration errors."""
    errors = []
    for spec in TOPIC_SPECS:
        full_name = topic_param(topic_id, spec.name)
        if not node.has_parameter(full_name):
            errors += _declare(node, full_name, topic_default(topic_id, spec), spec)
    return errors


def declare_template(node: Node) -> list[str]:
    """Declare the read-only ``all_topics.*`` settings of discovered topics; return errors.

    Read-only: a change would have to be applied to topics found since, under settings that
    did not hold when they were found; restart the monitor with other flags instead.
    """
    errors = []
    for spec in TEMPLATE_SPECS:
        full_name = template_param(spec.name)
        if not node.has_parameter(full_name):
            errors += _declare(node, full_name, spec.default, replace(spec, read_only=True))
    return errors


def undeclare_topic(node: Node, topic_id: str) -> list[str]:
    """Undeclare the ``topic.<id>.*`` parameters of a topic no longer listed in ``topics``.

    So ``ros2 param dump`` shows only what is in force; listing the topic again declares
    them anew (a params file's values for them apply again).
    """
    for spec in TOPIC_SPECS:
        full_name = topic_param(topic_id, spec.name)
        if node.has_parameter(full_name):
            node.undeclare_parameter(full_name)
    return []


def expectation_descriptor(spec: LimitSpec, full_name: str) -> ParameterDescriptor:
    """Descriptor of one expectation: dynamically typed, so 'not set' is its default."""
    unit = f' [{spec.unit}]' if spec.unit else ''
    kind = 'whole number' if spec.integer else 'number'
    high = f' and at most {spec.high:g}' if spec.high is not None else ''
    return ParameterDescriptor(
        name=full_name, dynamic_typing=True,
        description=f'{spec.description}{unit} Not set (the default): not checked.',
        additional_constraints=f'a {kind} ≥ 0{high}; checked over the whole run, the '
                               'verdict is the exit code (3 when one fails)')


def declare_expectations(node: Node, topic_ids: Iterable[str]) -> None:
    """Declare ``clock.expect.*`` and ``topic.<id>.expect.*`` not declared yet, unset by default.

    A value from ``--params-file`` or ``-p`` is taken as given; the caller validates it
    (``configuration.expectations.expectations_from``), since a dynamically typed parameter accepts
    any type. YAML's null (``ros2 param dump`` of an unset one, read by rcl as the string
    ``null``) leaves it unset, so a dump loads back as what was dumped.
    """
    names = [(f'{CLOCK_PREFIX}{spec.key}', spec) for spec in CLOCK_LIMITS]
    for topic_id in topic_ids:
        prefix = topic_expectation_prefix(topic_id)
        names += [(f'{prefix}{spec.key}', spec) for spec in TOPIC_LIMITS]
    for full_name, spec in names:
        if not node.has_parameter(full_name):
            override = node._parameter_overrides.get(full_name)  # rclpy has no public getter
            unset = (override is not None and isinstance(override.value, str)
                     and override.value in NULL_SPELLINGS)
            node.declare_parameter(full_name, None, expectation_descriptor(spec, full_name),
                                   ignore_override=unset)


def undeclare_expectations(node: Node, topic_id: str) -> None:
    """Undeclare the ``topic.<id>.expect.*`` parameters of a topic no longer listed."""
    prefix = topic_expectation_prefix(topic_id)
    for spec in TOPIC_LIMITS:
        if node.has_parameter(f'{prefix}{spec.key}'):
            node.undeclare_parameter(f'{prefix}{spec.key}')


def _declare(node: Node, full_name: str, default: Any, spec: ParamSpec) -> list[str]:
    value, ignore_override = default, False
    override = node._parameter_overrides.get(full_name)  # rclpy has no public getter
    if (isinstance(default, float) and override is not None
            and override.type_ == Parameter.Type.INTEGER):
        # `period_ms: 10` in a YAML file: accepted as 10.0, as `ros2 param set` accepts it.
        value, ignore_override = float(override.value), True
    try:
        node.declare_parameter(full_name, value, descriptor(spec, full_name),
                               ignore_override=ignore_override)
        return []
    except ParameterException as err:
        hint = (' (write floating point values with a decimal point, e.g. 10.0)'
                if isinstance(default, float) and isinstance(err, InvalidParameterTypeException)
                else '')
        node.declare_parameter(full_name, default, descriptor(spec, full_name),
                               ignore_override=True)
        return [f'{full_name}: {err}{hint}']


NODE_PARAMETERS: dict[str, bool] = {'use_sim_time': False,
                                     'start_type_description_service': True}
"""The parameters rclpy declares on every node (in ``Node.__init__``), with their defaults."""


def node_parameter_errors(overrides: Mapping[str, Parameter]) -> dict[str, str]:
    """Return ``{name: reason}`` for each of rclpy's own parameters given with a wrong type.

    rclpy declares them inside ``Node.__init__`` and raises at the first wrong type, as a
    traceback: ``-p use_sim_time:=yes_please`` (a string), ``:=1`` (an integer),
    ``use_sim_time: "yes"`` in a params file (quoted: a string). ``overrides`` are the
    values rcl parsed (``Node._parameter_overrides``, YAML rules), read by a node that
    declares none of them with a type. The reasons read like the monitor's own.
    """
    errors = {}
    for name, default in NODE_PARAMETERS.items():
        override = overrides.get(name)
        expected = Parameter.Type.from_parameter_value(default)
        if override is not None and override.type_ != expected:
            errors[name] = (f'{name}: {InvalidParameterTypeException(override, expected.name)} '
                            '(write true or false)')
    return errors


def coerce_integers(parameters: list[Parameter]) -> list[Parameter]:
    """Turn integers set on double parameters into doubles (``ros2 param set x 10``)."""
    out = []
    for parameter in parameters:
        if parameter.type_ == Parameter.Type.INTEGER and is_double(parameter.name):
            parameter = Parameter(parameter.name, Parameter.Type.DOUBLE, float(parameter.value))
        out.append(parameter)
    return out


def current_values(node: Node, names: Iterable[str]) -> dict[str, Any]:
    """``{name: value}`` of the declared parameters among ``names``."""
    return {name: node.get_parameter(name).value for name in names if node.has_parameter(name)}
