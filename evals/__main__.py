"""``python -m evals``: see :mod:`evals.cli`."""

import sys

from .cli import main

sys.exit(main())
