"""``python -m synthflow`` runs the CLI."""

import sys

from synthflow.cli import main

sys.exit(main())
