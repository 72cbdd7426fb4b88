"""Instructions our streamable-HTTP server executes per ``tools/call``, beside plain fastmcp, in both eras.

``classroom_load.py --plain`` measures throughput and latency, which on a shared 2-CPU machine move by +-10 %
from one run to the next, more than the few per cent our guards cost. Instructions hardly depend on the load:
each server runs under ``valgrind --tool=callgrind`` with instrumentation off (``--instr-atstart=no``), clients
connect and warm up, then instrumentation is switched on (``callgrind_control --instr=on``) for ``clients x
calls`` checked calls only, and the count is dumped. Ours is ``python -m mcp_teach.serve --transport
streamable-http`` (every guard on); plain is ``classroom_load.PLAIN_SERVER`` (fastmcp's ``run()``, the same
tools). The ratio ours / plain is what the throughput target (at least x0.95 of plain fastmcp's calls/s) bounds: at most
about 1 / 0.95 = 1.05.

    python benchmarks/http_call_instructions.py [--clients N] [--calls M]     # ~4 min
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from classroom_load import ERAS, PLAIN_SERVER, URL_LINE, check_result, free_port, operation

from mcp_teach.client import teaching_client

OURS, PLAIN = "ours", "plain fastmcp"
#: Seconds a server under valgrind may take to start (it runs ~5-10 times slower even uninstrumented).
START_TIMEOUT = 300.0
CALL_TIMEOUT = 300.0


class CountedServer:
    """A server process under callgrind, instrumentation off until :meth:`counting`."""

    def __init__(self, label: str, folder: Path) -> None:
        self.label, self.folder = label, folder
        self.out = folder / f"{label.replace(' ', '-')}.callgrind"
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={self.out}"]
        if label == PLAIN:
            script = folder / "plain_server.py"
            script.write_text(PLAIN_SERVER)
            port = free_port()
            argv = [sys.executable, str(script), str(port)]
            self.url = f"http://127.0.0.1:{port}/mcp"
        else:
            argv = [sys.executable, "-m", "mcp_teach.serve", "--transport", "streamable-http", "--port", "0"]
            self.url = ""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "OPENAI_", "LLM_", "FASTMCP_"))}
        env["PYTHONHASHSEED"] = "0"
        self.process = subprocess.Popen(
            [*valgrind, *argv], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=folder, env=env
        )

    def wait_ready(self) -> None:
        """Until ours prints its URL, or plain's port answers an HTTP request."""
        deadline = time.monotonic() + START_TIMEOUT
        if not self.url:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                if match := URL_LINE.search(line):
                    self.url = match.group(1)
                    return
                if time.monotonic() > deadline:
                    break
            raise RuntimeError(f"{self.label}: no URL printed")
        import httpx2

        while time.monotonic() < deadline and self.process.poll() is None:
            with contextlib.suppress(httpx2.HTTPError):
                httpx2.get(self.url, timeout=2)
                return
            time.sleep(0.5)
        raise RuntimeError(f"{self.label}: the server did not start")

    @contextlib.contextmanager
    def counting(self) -> Iterator[list[int]]:
        """Instrumentation on for the block; yields a list that then holds the instructions counted."""
        counted: list[int] = []
        _control("--zero", self.process.pid)
        _control("--instr=on", self.process.pid)
        try:
            yield counted
        finally:
            _control("--dump", self.process.pid)
            _control("--instr=off", self.process.pid)
        dumps = sorted(self.folder.glob(f"{self.out.name}.*"), key=lambda p: p.stat().st_mtime)
        text = dumps[-1].read_text()
        found = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
        if found is None:
            raise RuntimeError(f"no instruction count in {dumps[-1]}")
        counted.append(int(found.group(1)))
        for dump in dumps:
            dump.unlink()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _control(option: str, pid: int) -> None:
    subprocess.run(["callgrind_control", option, str(pid)], check=True, capture_output=True, timeout=120)


async def _client(url: str, era: str, number: int, calls: int, ready: asyncio.Event, go: asyncio.Event) -> int:
    """One client: connect and warm up, wait for ``go``, then ``calls`` checked calls; returns the errors."""
    errors = 0
    async with teaching_client(url, mode=era, timeout=CALL_TIMEOUT, init_timeout=START_TIMEOUT) as client:
        await client.list_tools()
        for call in range(3):
            await client.call_tool("calculator_add", {"a": number, "b": call})
        ready.set()
        await go.wait()
        for call in range(calls):
            tool, arguments, expected = operation(number, call)
            if check_result(await client.call_tool(tool, arguments, raise_on_error=False), expected):
                errors += 1
    return errors


async def measure(server: CountedServer, era: str, clients: int, calls: int) -> float:
    """Instructions per call for ``clients`` concurrent clients making ``calls`` calls each."""
    readies = [asyncio.Event() for _ in range(clients)]
    go = asyncio.Event()
    tasks = [
        asyncio.create_task(_client(server.url, era, number, calls, readies[number], go)) for number in range(clients)
    ]
    for ready in readies:
        await ready.wait()
    await asyncio.sleep(1)  # the warm-up's last answers written, its streams closed
    with server.counting() as counted:
        go.set()
        errors = sum(await asyncio.gather(*tasks))
    if errors:
        raise RuntimeError(f"{server.label} {era}: {errors} wrong answers")
    return counted[0] / (clients * calls)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=10, help="concurrent clients (default 10)")
    parser.add_argument("--calls", type=int, default=20, help="checked calls per client (default 20)")
    args = parser.parse_args(argv)
    versions = ", ".join(f"{name} {importlib.metadata.version(name)}" for name in ("fastmcp", "mcp", "uvicorn"))
    print(f"python {platform.python_version()}; {versions}; {args.clients} clients x {args.calls} calls counted")
    results: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="http-instructions-") as folder:
        for label in (OURS, PLAIN):
            server = CountedServer(label, Path(folder))
            try:
                server.wait_ready()
                for era in ERAS:
                    results[label, era] = await measure(server, era, args.clients, args.calls)
                    print(f"  {label:<14} {era:<6} {results[label, era] / 1e3:8.0f} k instructions per call")
            finally:
                server.stop()
    print()
    for era in ERAS:
        ours, plain = results[OURS, era] / 1e3, results[PLAIN, era] / 1e3
        print(f"{era:<6} ours / plain: {ours:.0f} k / {plain:.0f} k = x{ours / plain:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
