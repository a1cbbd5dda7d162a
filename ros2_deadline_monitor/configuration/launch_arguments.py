"""What the launch files check and do the same way: numeric arguments, a node that exits.

Launch files are plain installed files that import ``launch``; this module imports nothing of
it (the package runs without launch), so it is tested as pure logic and every launch file
that takes numbers refuses a bad one with the same sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import math
from typing import Any, TypeVar

Action = TypeVar('Action')


def check_numeric_arguments(configurations: Mapping[str, str], numbers: Mapping[str, type],
                  minimums: Mapping[str, float] | None = None) -> None:
    """Refuse a numeric launch argument that is not a (finite) number, naming it (ValueError).

    ``configurations`` is ``context.launch_configurations``, ``numbers`` the arguments to
    check with their types (``float`` or ``int``), ``minimums`` the floors the launch file
    itself needs. Otherwise launch reports only "could not convert string to float: 'abc'",
    without the argument's name. Ranges are the nodes' business (they refuse bad values with
    the reason), but for the arguments the launch file uses itself.
    """
    minimums = minimums or {}
    for name, kind in numbers.items():
        text = configurations[name]
        try:
            value = kind(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            kind_text = 'an integer' if kind is int else 'a number'
            raise ValueError(f'launch argument {name}:={text!r} is not {kind_text}')
        if name in minimums and value < minimums[name]:
            # A negative duration would never fire its timer: the launch would run forever.
            raise ValueError(f'launch argument {name}:={text!r} must be >= '
                             f'{minimums[name]:g} (0 runs until Ctrl-C)')


def stop_on_exit(shutdown: Callable[..., Action]) -> Callable[[Any, Any], Action | None]:
    """Return an ``on_exit`` handler ending the launch when its node ends (e.g. refused).

    ``shutdown`` is ``launch.actions.Shutdown``. Not while the launch already shuts down
    (Ctrl-C, ``duration``): launch would log "process[...] was required: shutting down
    launched system" for each node that stops.
    """
    def stop(event: Any, context: Any) -> Action | None:
        if context.is_shutdown:
            return None
        return shutdown(reason=f'{event.process_name} exited with code {event.returncode}')
    return stop
