"""Message classes from the type names found in the graph (``pkg/msg/Type``).

``rosidl_runtime_py.utilities.get_message`` does the same but is not installable everywhere
the monitor runs; a message class is just ``pkg.msg.Type``.
"""

from __future__ import annotations

import importlib

from ros2_deadline_monitor.analysis.cdr import first_field_is_stamp
from ros2_deadline_monitor.analysis.errors import MonitorError


class MessageTypeError(MonitorError):
    """A topic's type cannot be used (unknown, not installed, not a message)."""


def import_message(type_name: str) -> type:
    """Return the message class of ``pkg/msg/Type``; raise ``MessageTypeError`` otherwise."""
    parts = type_name.split('/')
    if len(parts) != 3 or parts[1] != 'msg' or not all(parts):
        raise MessageTypeError(f'{type_name!r} is not a message type name (pkg/msg/Type)')
    try:
        module = importlib.import_module(f'{parts[0]}.msg')
    except ImportError as err:
        raise MessageTypeError(
            f'cannot import {type_name}: {err} (is the {parts[0]} package installed and '
            'sourced?)') from err
    msg_class = getattr(module, parts[2], None)
    if msg_class is None or not hasattr(msg_class, 'get_fields_and_field_types'):
        raise MessageTypeError(f'{parts[0]}.msg has no message {parts[2]}')
    return msg_class


def has_leading_stamp(msg_class: type, type_name: str) -> bool:
    """Tell whether the type starts with a Header or Time, so its stamp can be read raw."""
    return first_field_is_stamp(msg_class.get_fields_and_field_types(), type_name)
