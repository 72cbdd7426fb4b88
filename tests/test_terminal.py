"""``mcp-teach demo``, ``mcp-teach chat`` and ``mcp-teach model serve`` as real subprocesses.

Each runs with the course settings removed from the environment and in an empty directory (no ``.env``). The
demo and chat processes of one group are started together and then checked one by one, which keeps the module fast.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import openai
import pytest
from support import HANG_TIMEOUT, refuses_connections

from mcp_teach.llm.teaching_model import MODEL_NAME

MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
DEMO_ANSWER = "3 × 4 = 12, 12 − 5 = 7. The answer is 7."
CHAT_INPUT = "What is 1 + 2?\n帮我算 2 乘 3\nexit\n"


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Finished:
    code: int
    stdout: str
    stderr: str


class Batch:
    """CLI processes started at once; ``result(name)`` waits for one of them."""

    def __init__(self, cwd: Path, clean_env) -> None:
        self.cwd, self.clean_env = cwd, clean_env
        self.processes: dict[str, tuple[subprocess.Popen, str | None]] = {}
        self.results: dict[str, Finished] = {}

    def start(self, name: str, args: list[str], *, stdin: str | None = None, **env: str) -> None:
        process = subprocess.Popen(
            [MCP_TEACH, *args],
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            cwd=self.cwd,
            env=self.clean_env(**env),
        )
        self.processes[name] = (process, stdin)

    def result(self, name: str) -> Finished:
        if name not in self.results:
            process, stdin = self.processes[name]
            stdout, stderr = process.communicate(stdin, timeout=HANG_TIMEOUT)
            self.results[name] = Finished(process.returncode, stdout, stderr)
        return self.results[name]

    def stop(self) -> None:
        for process, _ in self.processes.values():
            if process.poll() is None:
                process.kill()
            process.communicate(timeout=HANG_TIMEOUT)


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory, clean_env) -> Iterator[Batch]:
    batch = Batch(tmp_path_factory.mktemp("demo"), clean_env)
    for transport in ("in-memory", "stdio", "sse", "streamable-http"):
        batch.start(transport, ["demo", "--transport", transport])
    batch.start("unreachable", ["demo"], OPENAI_BASE_URL=f"http://127.0.0.1:{closed_port()}/v1")
    batch.start("remote without key", ["demo"], OPENAI_BASE_URL="https://llm.example.com/v1")
    yield batch
    batch.stop()


@pytest.fixture(scope="module")
def chats(tmp_path_factory: pytest.TempPathFactory, clean_env) -> Iterator[Batch]:
    batch = Batch(tmp_path_factory.mktemp("chat"), clean_env)
    batch.start("stdio", ["chat"], stdin=CHAT_INPUT)
    batch.start("eof", ["chat", "--transport", "in-memory"], stdin="What is 1 + 2?")
    unreachable = f"http://127.0.0.1:{closed_port()}/v1"
    batch.start("unreachable", ["chat", "--transport", "in-memory"], stdin=CHAT_INPUT, OPENAI_BASE_URL=unreachable)
    yield batch
    batch.stop()


def positions(text: str, *parts: str) -> list[int]:
    """Where each part first occurs in ``text`` (each must occur)."""
    found = [text.find(part) for part in parts]
    assert -1 not in found, [part for part, at in zip(parts, found, strict=True) if at == -1]
    return found


# --- mcp-teach demo ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["in-memory", "stdio", "sse", "streamable-http"])
def test_demo_prints_the_whole_tour_and_the_answer(demos: Batch, transport: str) -> None:
    demo = demos.result(transport)
    assert (demo.code, demo.stderr) == (0, "")
    out = demo.stdout
    assert out.startswith(f"Talking to a calculator over {transport}; LLM: offline teaching model ({MODEL_NAME})")
    opening = ["initialize", "notifications/initialized"] if transport == "sse" else ["server/discover"]
    at = positions(
        out,
        "=== 1. Connecting",
        *(f"client → server  {method}" for method in opening),
        "=== 2. tools/list",
        "client → server  tools/list  (request id=",
        '"name": "calculator_add"',
        "=== 3. tools/call: calculator_add(a=1, b=2)",
        "client → server  tools/call  (request id=",
        '"text": "3.0"',
        "=== 4. The LLM tool loop: 'multiply 3 by 4, then subtract 5'",
        "llm → client  tool_calls: calculator_multiply",
        "llm → client  tool_calls: calculator_subtract",
        "client → llm  chat.completions round 3",
        '"text": "7.0"',
        "=== Answer",
    )
    assert at == sorted(at)
    assert out.splitlines()[-2:] == ["=== Answer " + "=" * 64, DEMO_ANSWER]


@pytest.mark.parametrize(
    ("name", "code", "fragments"),
    [
        ("unreachable", 1, ["mcp-teach: LLM error: Cannot reach the LLM at http://127.0.0.1:", "OPENAI_BASE_URL"]),
        ("remote without key", 1, ["mcp-teach: LLM error:", "OPENAI_API_KEY is empty"]),
    ],
)
def test_demo_with_bad_settings_exits_with_the_fix_and_no_traceback(
    demos: Batch, name: str, code: int, fragments: list[str]
) -> None:
    demo = demos.result(name)
    assert demo.code == code
    assert all(fragment in demo.stderr for fragment in fragments), demo.stderr
    assert "Traceback" not in demo.stderr + demo.stdout
    assert DEMO_ANSWER not in demo.stdout


# --- mcp-teach chat ----------------------------------------------------------------------------------------------


def test_chat_shows_each_tool_call_then_the_answer(chats: Batch) -> None:
    chat = chats.result("stdio")
    assert (chat.code, chat.stderr) == (0, "")
    at = positions(
        chat.stdout,
        "type exit to leave.",
        '  [model → tool_calls: calculator_add({"a": 1, "b": 2})]',
        "assistant> 1 + 2 = 3.",
        '  [model → tool_calls: calculator_multiply({"a": 2, "b": 3})]',
        "assistant> 计算结果：2 × 3 = 6。",
    )
    assert at == sorted(at)
    assert chat.stdout.count("you> ") == 3  # two questions, then exit


def test_chat_ends_cleanly_at_end_of_input(chats: Batch) -> None:
    chat = chats.result("eof")
    assert (chat.code, chat.stderr) == (0, "")
    assert chat.stdout.splitlines()[-3:] == [  # the question without a newline is answered, then EOF ends the chat
        'you>   [model → tool_calls: calculator_add({"a": 1, "b": 2})]',
        "assistant> 1 + 2 = 3.",
        "you> ",
    ]


def test_chat_reports_an_llm_error_and_keeps_going(chats: Batch) -> None:
    chat = chats.result("unreachable")
    assert chat.code == 0 and "Traceback" not in chat.stderr + chat.stdout
    errors = [line for line in chat.stdout.splitlines() if "error> " in line]
    assert len(errors) == 2  # one per question: the chat went on after the first
    assert all("Cannot reach the LLM" in line and "OPENAI_BASE_URL" in line for line in errors)


# --- mcp-teach model serve ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("signum", "key"),
    [(signal.SIGINT, None), (signal.SIGTERM, "sk-serve-secret-0123456789")],
    ids=["SIGINT", "SIGTERM"],
)
def test_model_serve_answers_through_the_sdk_and_stops_on_a_signal(cli_server, signum: int, key: str | None) -> None:
    server = cli_server([MCP_TEACH, "model", "serve", "--port", "0", *(["--api-key", key] if key else [])])
    url = server.url
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    assert url == f"http://127.0.0.1:{port}/v1"
    llm = openai.OpenAI(base_url=url, api_key=key or "anything", max_retries=0, timeout=HANG_TIMEOUT)
    numbers = {"a": {"type": "number"}, "b": {"type": "number"}}
    tool = {"type": "function", "function": {"name": "calculator_add", "parameters": {"properties": numbers}}}
    completion = llm.chat.completions.create(
        model=MODEL_NAME, messages=[{"role": "user", "content": "What is 1 + 2?"}], tools=[tool]
    )
    [call] = completion.choices[0].message.tool_calls
    assert (call.function.name, call.function.arguments) == ("calculator_add", '{"a": 1, "b": 2}')
    assert [model.id for model in llm.models.list()] == [MODEL_NAME]
    if key:
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=url, api_key="wrong", max_retries=0).models.list()

    code, stdout, stderr = server.stop(signum)
    assert code == 0 and stdout == ""
    assert stderr.startswith(f"offline teaching model on {url}")
    assert f"OPENAI_BASE_URL={url} OPENAI_MODEL={MODEL_NAME}" in stderr
    assert "Traceback" not in stderr and (key is None or key not in stderr)
    assert refuses_connections(port)


def test_model_serve_on_a_busy_port_says_why(tmp_path: Path, clean_env) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        done = subprocess.run(
            [MCP_TEACH, "model", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=clean_env(),
            timeout=HANG_TIMEOUT,
        )
    assert done.returncode == 1
    assert done.stderr.startswith("mcp-teach: cannot start:") and "Traceback" not in done.stderr


# --- demo and chat against a server running in "another terminal" -----------------------------------------------


@pytest.mark.parametrize(("transport", "path"), [("sse", "/sse"), ("streamable-http", "/mcp")])
def test_demo_and_chat_talk_to_a_running_server_by_url(cli_server, tmp_path, clean_env, transport, path):
    server = cli_server([MCP_TEACH, "serve", "--transport", transport, "--port", "0"])
    url = server.url
    assert url.endswith(path)
    batch = Batch(tmp_path, clean_env)
    try:
        batch.start("demo", ["demo", "--url", url])
        batch.start("chat", ["chat", "--url", url], stdin="What is 1 + 2?\nexit\n")
        demo, chat = batch.result("demo"), batch.result("chat")
    finally:
        batch.stop()
    assert demo.code == 0, demo.stderr
    assert f"Talking to the server at {url}" in demo.stdout
    assert ("initialize" if transport == "sse" else "server/discover") in demo.stdout
    assert DEMO_ANSWER in demo.stdout
    assert chat.code == 0, chat.stderr
    assert "assistant> 1 + 2 = 3." in chat.stdout
    code, _, stderr = server.stop()
    assert code == 0 and "Traceback" not in stderr
