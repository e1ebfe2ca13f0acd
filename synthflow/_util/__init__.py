"""Helpers every layer may use; this package itself imports nothing.

Files (atomic writes, hashes: below the privacy package), outputs (refusing to overwrite),
HTML, progress bars, lazy package exports, notices and table readers.
"""
