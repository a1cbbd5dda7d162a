"""sim_clock and demo_controller stop like a ROS user expects: summary kept, no rosout noise.

``ros2 run`` in a terminal delivers Ctrl-C twice (the terminal signals the whole process group
and ``ros2 run`` forwards it), so each tool gets two SIGINTs in a row here.
"""

from __future__ import annotations

import signal
import time

from own_names import ns  # test/plugins: the test's own names
import pytest

ROSOUT_ERROR = "publisher's context is invalid"


@pytest.mark.parametrize(('module', 'params', 'topic', 'summary'), [
    ('sim_clock', {}, '/clock', '/clock messages:'),
    ('demo_controller', {'topic': 'demo/cmd'}, '/demo/cmd', 'stalled'),
])
def test_two_sigints_keep_the_summary_and_rosout_quiet(tools, ros_context, module, params,
                                                       topic, summary):
    from rclpy.node import Node

    process = tools.start(module, **params)
    topic = ns(topic)  # the test's own: /clock remapped, the relative name in its namespace
    # Its publisher exists once the node is up (its signal handlers are installed by then).
    node = Node('shutdown_test', context=ros_context)
    try:
        deadline = time.monotonic() + 20.0
        while node.count_publishers(topic) == 0:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, f'no publisher on {topic} after 20 s'
            time.sleep(0.05)
    finally:
        node.destroy_node()
    process.send_signal(signal.SIGINT)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 0, stderr
    assert summary in stderr
    assert ROSOUT_ERROR not in stderr
    assert 'Traceback' not in stderr and 'KeyboardInterrupt' not in stderr
