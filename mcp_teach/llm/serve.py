"""``mcp-teach model serve``: the offline teaching model as an HTTP API on loopback.

One server, both APIs: OpenAI's chat completions on ``/v1/chat/completions`` and
Anthropic's Messages on ``/v1/messages`` (whose SDK adds ``/v1`` itself).

Behind the course servers' Host/Origin guard. On every interface (``--host 0.0.0.0``) the guard accepts any
``Host`` from other machines (it cannot know the names they use), so a page that rebinds its own name to this
machine's address would pass it: off loopback the server refuses to start without ``--api-key``, as ``mcp-teach
serve`` refuses without a class secret.
"""

from __future__ import annotations

import contextlib
import sys

import uvicorn
from starlette.types import ASGIApp

from mcp_teach.config import LOOPBACK, ConfigError, is_loopback
from mcp_teach.llm.endpoint import create_app
from mcp_teach.llm.teaching_model import MODEL_NAME
from mcp_teach.transports.foreground import stop_on_sigterm
from mcp_teach.transports.http_app import host_origin_guard
from mcp_teach.transports.sockets import QUIET_UVICORN, bind_socket, server_url


def model_app(host: str = LOOPBACK, api_key: str | None = None) -> ASGIApp:
    """The endpoint as served over HTTP: behind the course servers' Host/Origin guard for ``host`` (an invalid
    ``Origin`` gets 403, a foreign ``Host`` 421), so a web page cannot drive it through DNS rebinding. In-process
    use (``httpx2.ASGITransport``) has no network to guard and takes :func:`create_app` as it is."""
    return host_origin_guard(create_app(api_key), host)


def run_model_server(host: str = LOOPBACK, port: int = 8001, api_key: str | None = None) -> None:
    """Serve until Ctrl-C or SIGTERM; print the settings that point a client at it."""
    if not (is_loopback(host) or api_key):
        raise ConfigError(
            f"--host {host} makes the offline model reachable from other machines, and without a key anyone who "
            "reaches it may use it (a web page too, by pointing its own name at this machine): add --api-key KEY "
            "and give clients that key (OPENAI_API_KEY or ANTHROPIC_API_KEY), or listen on 127.0.0.1."
        )
    sock = bind_socket(host, port)
    sock.listen(2048)
    url = server_url(host, sock.getsockname()[1], "/v1")
    print(
        f"offline teaching model on {url}  (Ctrl-C stops it)\n"
        f"  use it with: OPENAI_BASE_URL={url} OPENAI_MODEL={MODEL_NAME} OPENAI_API_KEY=<any>\n"
        f"  or, Anthropic's Messages API: ANTHROPIC_BASE_URL={url.removesuffix('/v1')} "
        f"ANTHROPIC_MODEL={MODEL_NAME} ANTHROPIC_API_KEY=<any>",
        file=sys.stderr,
        flush=True,
    )
    stop_on_sigterm()
    config = uvicorn.Config(model_app(host, api_key), lifespan="off", **QUIET_UVICORN)  # slow requests cut off too
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
