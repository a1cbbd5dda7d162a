"""A stop signal ends an executor's wait inside rcl at once (``live/stop_signals.py``).

Each case runs in a process of its own, whose main thread (where Python runs signal handlers)
spins a real rclpy executor and sends itself SIGINT. With the wake-up the spin returns long
before its timeout; without it (the control) it waits the whole timeout, as the executables
did before, which is why they polled every 0.1 s.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CHILD = """
import json, os, signal, sys, threading, time
from ros2_deadline_monitor.live.stop_signals import StopSignals

wake, timeout_s = sys.argv[1] == 'wake', float(sys.argv[2])
with StopSignals() as signals:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('stop_signals_test', start_parameter_services=False)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    if wake:
        signals.wake(node)
    # Before or during the wait alike: the guard condition stays triggered until waited on.
    threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT)).start()
    start = time.monotonic()
    executor.spin_once(timeout_sec=timeout_s)
    waited_s = time.monotonic() - start
    stopped = signals.stop.wait(timeout_s)  # the handler runs in this thread, now
    executor.shutdown(timeout_sec=0)
    node.destroy_node()
    rclpy.try_shutdown()
print(json.dumps({'stopped': stopped, 'waited_s': waited_s}))
"""


@pytest.mark.parametrize(('mode', 'timeout_s'), [('wake', 60.0), ('no_wake', 1.0)])
def test_a_signal_ends_the_wait_only_with_the_wake_up(mode, timeout_s):
    done = subprocess.run([sys.executable, '-c', CHILD, mode, str(timeout_s)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert 'Traceback' not in done.stderr, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result['stopped']
    # The wait ended before its timeout (a guard condition woke it) or ran it out.
    assert (result['waited_s'] < timeout_s / 2) is (mode == 'wake'), result
