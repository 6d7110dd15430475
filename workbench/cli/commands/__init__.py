"""One module per ``wb`` command; see ``workbench.cli`` for the convention."""
