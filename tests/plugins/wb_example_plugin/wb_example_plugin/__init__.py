"""An example wb plug-in: the ``toy-latency`` capture format and the ``toy`` lens."""
