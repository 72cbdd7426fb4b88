"""mcp-teach: the companion package of a course on the Model Context Protocol.

Import what a lesson needs from its module, e.g.
``from mcp_teach.capture import CaptureTransport``.
"""

__version__ = "0.1.0"
