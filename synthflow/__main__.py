"""``python -m synthflow`` runs the CLI."""

from synthflow.cli import entry

entry()
