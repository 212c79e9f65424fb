from sphinx_data_viewer.sphinx_data_viewer import setup  # NOQA
