"""What crossed the wire, recorded exactly: the client side of every lesson.

``capture`` (``CaptureTransport``: every JSON-RPC message, both directions) into
``messages`` (``Capture``, ``WireMessage``); ``http_recording`` (the HTTP exchanges underneath); ``raw_stdio`` and
``raw_memory`` (hand-written messages to a server, over a pipe or in memory); ``modern_post`` (a 2026-07-28 request
by hand); ``local_errors`` (the mcp SDK's own timeout and closed-connection errors, told from a server's);
``sse`` (events in a recorded stream); ``redact`` (no credential is ever kept); ``plain_text`` (how
recorded things read as text); the ``mcp-teach tap`` recorder for any host's traffic: ``host_tap_stdio`` and
``host_tap_http`` (the relays), ``host_tap_writer`` (the recording), ``host_tap_recording`` (``load_tap``: a
recording as a ``Capture``) and ``har`` (HTTP exchanges as HAR 1.2).
May import config, servers and transports.
"""
