"""mcp-teach: the companion package of a course on the Model Context Protocol.

One subpackage per job, in layers. A module imports only from its own layer or a lower
one (``tests/test_layers.py`` enforces it), so the servers know nothing of the
notebooks that talk to them:

    config        settings from .env: the bottom, importable by everything
    private_files files only their owner reads (logs, recordings): beside config, for every layer
    servers/      the MCP servers students talk to
    transports/   serving any of those servers: stdio, SSE, streamable HTTP, guards, class mode
    wire/         what crossed the wire: capture, messages, HTTP exchanges, stdio bytes, redaction,
                  requests written by hand
    client        the course's client helpers (a fixed identity, a calculator on any connection)
    course.conformance   the official conformance suite run against a server (beside client: it serves
                  one and connects to it; lesson 13's checks use it)
    llm/          the offline teaching model, its endpoint, provider choice, the tool loop
    display/      how it looks in a notebook: show, diagrams, explorer
    lessons/      helpers that exist for one lesson
    notebook_setup what the first cell of every lesson calls (beside lessons/)
    exercises/    every exercise's expectations, blank lessons, student copies, grading
    course/       the course's own tooling, for students and instructors: the course folder (``mcp-teach
                  lessons``), blank lessons built from the solved ones, the nbgrader course, the terminal
                  demo and chat, and the conformance runner (which sits lower, beside client)
    serve, cli    the commands: ``python -m mcp_teach.serve`` and ``mcp-teach``

Import what a lesson needs from its module, e.g.
``from mcp_teach.wire.capture import CaptureTransport``.
"""

__version__ = "0.1.0"
