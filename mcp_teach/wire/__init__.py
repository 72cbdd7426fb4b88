"""What crossed the wire, recorded exactly: the client side of every lesson.

``capture`` (``CaptureTransport``: every JSON-RPC message, both directions) into
``messages`` (``Capture``, ``WireMessage``); ``http_recording`` (the HTTP
exchanges underneath); ``stdio_tap`` (the bytes on a stdio server's pipes);
``raw_stdio`` (hand-written lines to a stdio server); ``sse`` (events in a recorded stream); ``redact`` (no credential
is ever kept); ``plain_text`` (how recorded things read as text); the ``mcp-teach tap`` recorder for any host's
traffic: ``tap_stdio`` and ``tap_http`` (the relays), ``tap_writer`` (the recording), ``tap_recording``
(``load_tap``: a recording as a ``Capture``) and ``har`` (HTTP exchanges as HAR 1.2).
May import config, servers and transports.
"""
