"""The bundled release specs, installed as ``synthflow._configs`` (see pyproject.toml)."""
