"""A /clock publisher process for the tests: a simulator stand-in paced to a target RTF.

Sim time advances by one step per message; message k is due at wall ``k * step / rtf`` after
the start (monotonic clock). A lag up to ``--max-lag-ms`` is made up by publishing the late
steps at once, so the average RTF is the target even on a busy machine (in full suite runs
this process was once held up for about 330 ms during discovery, reproducibly); behind by
more, the schedule restarts from now. Unlike the shipped ``sim_clock``, this stand-in is meant
to hit its target, so the tests can check the RTF the monitor reports. Runs until SIGINT or
SIGTERM.
"""

import argparse
import signal
import time

import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rosgraph_msgs.msg import Clock

NS_PER_S = 1_000_000_000


def main() -> int:
    """Publish /clock until told to stop."""
    parser = argparse.ArgumentParser()
    parser.add_argument('--rtf', type=float, default=1.0)
    parser.add_argument('--step-ms', type=float, default=1.0)
    parser.add_argument('--max-lag-ms', type=float, default=1000.0)
    args = parser.parse_args()
    running = [True]

    def stop(*_: object) -> None:
        running[0] = False

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('test_sim_clock')
    publisher = node.create_publisher(
        Clock, '/clock', QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
    step_ns = round(args.step_ms * 1e6)
    wall_step_ns = round(step_ns / args.rtf)
    max_lag_ns = max(round(args.max_lag_ms * 1e6), wall_step_ns)
    sim_ns = 1000 * NS_PER_S
    anchor_wall, anchor_k, k = time.monotonic_ns(), 0, 0
    msg = Clock()
    while running[0]:
        due = anchor_wall + (k - anchor_k) * wall_step_ns
        now = time.monotonic_ns()
        if now < due:
            time.sleep((due - now) / 1e9)
        elif now - due > max_lag_ns:
            anchor_wall, anchor_k = now, k
        msg.clock.sec, msg.clock.nanosec = divmod(sim_ns, NS_PER_S)
        publisher.publish(msg)
        sim_ns += step_ns
        k += 1
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
