"""SIGINT, SIGTERM and SIGHUP stop an executable's spin loop at once, without polling.

Python runs a signal handler only between bytecodes, and an executor waiting inside rcl runs
none: a loop that spun with a 0.1 s timeout to notice a stop woke ten times a second, and each
wake-up rebuilt rclpy's wait set (a third of the CPU of a monitor with 1,000 idle topics).
Here the interpreter's own C handler also writes to a pipe (``signal.set_wakeup_fd``); a
thread waiting on it triggers a guard condition of the spun node, which ends the wait. The
handlers are installed before rclpy is imported (a Ctrl-C during the imports must stop the
program, not print a traceback); the wake-up once the node exists.

SIGHUP is what a closed terminal (or an ended ssh session) sends: the run it ends deserves
its summary as much as one ended by SIGTERM. Once an executable has written its outcome (the
monitor's summary file names its exit code) it calls ``hold``: from then on stop signals are
ignored until the process exits. Python's finalization resets the handlers to the defaults,
and a second Ctrl-C 50 ms after the first, while DDS was being torn down, ended the process
with 130 (SIGTERM: 143) while its summary file said ``"exit_code": 0``.
"""

from __future__ import annotations

import os
import signal
import threading
from types import TracebackType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
SPIN_TIMEOUT_S = 1.0
"""Longest wait inside rcl. A stop ends the wait at once (``wake``); this bounds it only
where the wake-up cannot be installed."""


class StopSignals:
    """Set ``stop`` on a stop signal, and wake the executor spinning ``wake``'s node.

    A context manager: on exit the wake-up file and (unless ``hold`` was called) the previous
    handlers are restored, and the thread ends.
    """

    def __init__(self) -> None:
        """Install the handlers (main thread only, as ``signal.signal`` requires)."""
        self.stop = threading.Event()
        self.received: int | None = None
        """The first stop signal's number (None before one came)."""
        self._held = False
        self._previous = {sig: signal.signal(sig, self._on_signal) for sig in SIGNALS}
        self._pipe: tuple[int, int] | None = None
        self._previous_fd = -1
        self._thread: threading.Thread | None = None

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.received is None:
            self.received = signum
        self.stop.set()

    @property
    def received_name(self) -> str | None:
        """The first stop signal's name (``SIGHUP``), None before one came."""
        return None if self.received is None else signal.Signals(self.received).name

    def hold(self) -> None:
        """Ignore stop signals from now until the process exits: its outcome is written.

        ``SIG_IGN`` survives Python's finalization (a Python handler would be reset to the
        default there); the process still ends, with the exit code it reported.
        """
        self._held = True
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)

    def wake(self, node: Any) -> None:
        """Trigger a guard condition of ``node`` (spun by the caller's executor) on a signal."""
        if self._pipe is not None:
            return
        guard = node.create_guard_condition(lambda: None)
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)  # set_wakeup_fd requires it; a full pipe drops bytes
        self._previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        self._pipe = (read_fd, write_fd)

        def forward() -> None:
            while os.read(read_fd, 64):  # b'' once the write end is closed
                try:
                    guard.trigger()
                except Exception:  # noqa: BLE001 - destroyed with its node: nothing to wake
                    return

        self._thread = threading.Thread(target=forward, name='stop_signals', daemon=True)
        self._thread.start()
        if self.stop.is_set():  # a signal before the wake-up existed
            guard.trigger()

    def close(self) -> None:
        """Restore the wake-up file and (unless held) the previous handlers; end the thread."""
        if not self._held:
            for sig, handler in self._previous.items():
                signal.signal(sig, handler)
        if self._pipe is None:
            return
        read_fd, write_fd = self._pipe
        self._pipe = None
        signal.set_wakeup_fd(self._previous_fd)
        os.close(write_fd)
        if self._thread is not None:
            self._thread.join()
        os.close(read_fd)

    def __enter__(self) -> StopSignals:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
