"""Message layouts from rosidl introspection, for finding a stamp in the raw bytes.

The monitor never deserializes a monitored topic; to read a stamp that is not the first
field it needs the type's member layout. rclpy message classes carry it: ``SLOT_TYPES``
(``rosidl_parser.definition`` objects) in the order of ``get_fields_and_field_types()``,
and nested types are message classes of their own. This module turns that into the plain,
ROS-free ``MessageLayout`` that ``analysis/stamp_field.py`` resolves, so the live node and the
offline analyzer (``bag/layouts.py``, from a bag's definitions) share one rule.
"""

from __future__ import annotations

from functools import lru_cache

from rosidl_parser import definition

from ros2_deadline_monitor.analysis.stamp_field import (
    ArrayType,
    DEFAULT_STAMP_FIELD,
    FieldType,
    MessageLayout,
    OpaqueType,
    primitive,
    resolve_stamp_field,
    SequenceType,
    StampFieldError,
    StampRule,
    StringType,
)
from ros2_deadline_monitor.analysis.tf_message import is_tf_layout
from ros2_deadline_monitor.live.message_types import import_message, MessageTypeError

__all__ = ['laid_out_like_tf', 'message_layout', 'message_type_name', 'stamp_rule_for_class']


def message_type_name(msg_class: type) -> str:
    """Spell a message class's type as ``pkg/msg/Type`` (from its generated module)."""
    package = msg_class.__module__.split('.', 1)[0]
    return f'{package}/msg/{msg_class.__name__}'


@lru_cache(maxsize=256)
def message_layout(msg_class: type) -> MessageLayout:
    """Return the layout of an rclpy message class, nested types included.

    A nested type that cannot be imported becomes an ``OpaqueType``, so that only a stamp
    behind or inside it is refused (with that reason); the class itself is trusted to be a
    message.
    """
    names = list(msg_class.get_fields_and_field_types())
    slots = msg_class.SLOT_TYPES
    if len(names) != len(slots):
        raise StampFieldError(f'{message_type_name(msg_class)}: {len(names)} fields but '
                              f'{len(slots)} slot types; cannot describe its layout')
    fields = tuple((name, _field_type(slot)) for name, slot in zip(names, slots, strict=True))
    return MessageLayout(message_type_name(msg_class), fields)


def _field_type(slot: definition.AbstractType) -> FieldType:
    """Translate one ``rosidl_parser.definition`` type."""
    if isinstance(slot, definition.BasicType):
        return primitive(slot.typename)
    if isinstance(slot, definition.NamespacedType):
        type_name = '/'.join([*slot.namespaces, slot.name])
        try:
            return message_layout(import_message(type_name))
        except MessageTypeError as err:  # only a stamp behind or inside it is unreachable
            return OpaqueType(type_name, f'its type cannot be described: {err}')
    if isinstance(slot, (definition.BoundedString, definition.UnboundedString)):
        return StringType(bound=getattr(slot, 'maximum_size', None))
    if isinstance(slot, (definition.BoundedWString, definition.UnboundedWString)):
        return StringType(bound=getattr(slot, 'maximum_size', None), wide=True)
    if isinstance(slot, definition.Array):
        return ArrayType(_field_type(slot.value_type), slot.size)
    if isinstance(slot, definition.BoundedSequence):
        return SequenceType(_field_type(slot.value_type), slot.maximum_size)
    if isinstance(slot, definition.UnboundedSequence):
        return SequenceType(_field_type(slot.value_type))
    return OpaqueType(type(slot).__name__)


def stamp_rule_for_class(msg_class: type, path: str = DEFAULT_STAMP_FIELD) -> StampRule:
    """Resolve ``topic.<id>.stamp_field`` against a topic's message class.

    Raises ``StampFieldError`` (a ``ConfigError``) with the reason when the path does not lead
    to a ``builtin_interfaces/Time`` that can be read from the raw bytes.
    """
    return resolve_stamp_field(message_layout(msg_class), path)


def laid_out_like_tf(msg_class: type) -> bool:
    """Tell whether an rclpy message class is laid out like ``tf2_msgs/TFMessage``.

    False when its layout cannot be described (``read_transforms`` would not read it).
    """
    try:
        return is_tf_layout(message_layout(msg_class))
    except (StampFieldError, MessageTypeError):
        return False
