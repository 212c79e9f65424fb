from sphinx_needs.needs import __version__, setup  # noqa: F401
