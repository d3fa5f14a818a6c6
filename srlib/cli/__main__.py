"""``python -m srlib.cli``: the ``srlib`` command."""

import sys

from srlib.cli import main

sys.exit(main())
