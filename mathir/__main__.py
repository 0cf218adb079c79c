"""``python -m mathir``: the ``mathir`` command (e.g. where the console script is not on
PATH)."""

from mathir.cli import main

raise SystemExit(main())
