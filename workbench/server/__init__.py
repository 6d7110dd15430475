"""``wb serve``: an HTTP API over the store ``wb`` uses, for GPU nodes, CI jobs and colleagues.

``app.py`` builds the Starlette application (routes under ``/api/v1``, the JSON error
shape, one log line per request); ``auth.py`` checks bearer tokens (``store/tokens.py``);
``uploads.py`` streams a capture to a temporary file under the resource budget and imports
it with ``workbench.ingest``; ``queries.py`` answers runs, declarations, comparisons and
bundles with the CLI's ``--json`` documents; ``openapi.py`` is the API's description,
served and checked in as ``docs/openapi.json``; ``client.py`` is the httpx client that
``wb push`` and ``wb --server URL ...`` use. Importing this package loads nothing heavy:
Starlette and uvicorn load with ``app``, httpx with ``client``.
"""
