"""The use cases: each thing a user does to the store, one function over a typed request and a
typed answer (``core.py``), run by a transport that the faces hold without knowing which it is:
``Local(store)`` here, ``Remote(url, token)`` through ``wb serve`` (``transport.py``,
``remote.py``). The command line, the TUI and the server's routes call these and nothing else
for the store; ``catalog.py`` registers them all (the server's routes, its OpenAPI document).

Importing this package loads nothing heavy: a face imports the module of the use case it runs.
"""
