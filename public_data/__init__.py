"""The default public data, installed as ``synthflow._public_data`` (see pyproject.toml)."""
