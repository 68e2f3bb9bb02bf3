"""``python -m timingbench``: the command line (:mod:`timingbench.cli`)."""

import sys

from timingbench.cli import main

sys.exit(main())
