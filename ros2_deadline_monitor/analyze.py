"""``python -m ros2_deadline_monitor.analyze BAG ...``: the offline analyzer, no ROS needed.

The same command as the ``analyze`` executable (``ros2 run ros2_deadline_monitor analyze``);
the code lives in ``ros2_deadline_monitor.bag.analyze``.
"""

import sys

from ros2_deadline_monitor.bag.analyze import main

if __name__ == '__main__':
    sys.exit(main())
