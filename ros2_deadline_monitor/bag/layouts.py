"""Message layouts from rosbags' type definitions, for finding a stamp in recorded bytes.

The live node describes a type from rosidl introspection (``live/rosidl_layouts.py``); a bag
carries the definitions it was recorded with (MCAP schemas, Jazzy db3 message definitions),
which rosbags parses into ``(constants, fields)``, each field ``(name, (Nodetype, detail))``.
This module turns those into the same plain ``MessageLayout``, so ``--stamp-field`` and
``topic.<id>.stamp_field`` resolve to the same ``StampRule`` live and offline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ros2_deadline_monitor.analysis.errors import BagError
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
from ros2_deadline_monitor.bag.reader import BagSource

__all__ = ['bag_stamp_rule', 'layout_from_definitions']

Definition = Callable[[str], Any]
"""``definition(msgtype) -> (constants, fields)``, e.g. ``BagSource.definition`` or
``typestore.fielddefs.__getitem__``; it raises for unknown types."""


def layout_from_definitions(msgtype: str, definition: Definition) -> MessageLayout:
    """Return the layout of ``msgtype`` (``pkg/msg/Type``), nested types included.

    Errors of ``definition`` for ``msgtype`` itself propagate (``BagError`` for a type the
    bag does not define; a ``KeyError`` from a plain typestore becomes ``StampFieldError``).
    A nested type without a definition becomes an ``OpaqueType``, so that only a stamp
    behind or inside it is refused (with that reason).
    """
    memo: dict[str, MessageLayout] = {}

    def layout(name: str) -> MessageLayout:
        if name not in memo:
            try:
                _, fields = definition(name)
            except KeyError:
                raise StampFieldError(f'unknown message type {name}') from None
            memo[name] = MessageLayout(
                name, tuple((field_name, convert(desc)) for field_name, desc in fields))
        return memo[name]

    def nested(name: str) -> FieldType:
        try:
            return layout(name)
        except (BagError, StampFieldError) as err:
            return OpaqueType(name, f'it has no definition: {err}')

    def convert(desc: Any) -> FieldType:
        from rosbags.typesys.base import Nodetype

        kind, detail = desc
        if kind == Nodetype.BASE:
            name, bound = detail
            if name in ('string', 'wstring'):
                return StringType(bound=bound or None, wide=name == 'wstring')
            return primitive(name)
        if kind == Nodetype.NAME:
            return nested(detail)
        if kind == Nodetype.ARRAY:
            return ArrayType(convert(detail[0]), detail[1])
        if kind == Nodetype.SEQUENCE:
            return SequenceType(convert(detail[0]), detail[1] or None)
        raise StampFieldError(f'{msgtype}: unknown kind of field {kind!r}')

    return layout(msgtype)


def bag_stamp_rule(bag: BagSource, msgtype: str, path: str = DEFAULT_STAMP_FIELD) -> StampRule:
    """Resolve a stamp field path against a topic type as the bag defines it.

    Raises ``BagError`` when the bag holds no definition of the type (or of a type inside it)
    and ``StampFieldError`` when the path does not lead to a readable Time.
    """
    return resolve_stamp_field(layout_from_definitions(msgtype, bag.definition), path)
