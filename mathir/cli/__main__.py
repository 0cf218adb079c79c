"""``python -m mathir.cli``: the ``mathir`` command."""

import sys

from mathir.cli import main

sys.exit(main())
