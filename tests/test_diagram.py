"""Sequence diagrams drawn from real captures (both protocol eras) and a real tool-loop trace."""

from __future__ import annotations

import io
import warnings

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch
from support import legacy_session

from mcp_teach.client import teaching_client
from mcp_teach.config import Settings
from mcp_teach.display.diagram import draw_sequence, drawable, fit, sequence_steps
from mcp_teach.display.show import COLOURS
from mcp_teach.llm.loop import LoopResult, ask
from mcp_teach.llm.provider import model_name, openai_client
from mcp_teach.servers.calculator import build_calculator_server
from mcp_teach.wire.capture import CaptureTransport
from mcp_teach.wire.messages import Capture, WireMessage

RED = COLOURS["error"]


_legacy = legacy_session


async def _modern(calls: int = 1) -> CaptureTransport:
    capture = CaptureTransport(build_calculator_server())
    async with teaching_client(capture) as client:
        await client.list_tools()
        for number in range(calls):
            await client.call_tool("calculator_add", {"a": number, "b": 2})
    return capture


async def _ask(question: str) -> LoopResult:
    settings = Settings()  # the offline teaching model
    async with teaching_client(CaptureTransport(build_calculator_server())) as client:
        return await ask(question, client, openai_client(settings), model=model_name(settings), since=0)


@pytest.fixture(scope="module")
def legacy(run) -> CaptureTransport:
    """Handshake, tools/list, 1 + 2, and 1 / 0 (a result with isError: true): 9 messages."""
    return run(_legacy)


@pytest.fixture(scope="module")
def modern(run) -> CaptureTransport:
    return run(_modern)


@pytest.fixture(scope="module")
def division(run) -> LoopResult:
    """The loop for "What is 7 divided by 0?", connection included."""
    return run(_ask, "What is 7 divided by 0?")


def arrows(figure: Figure) -> list[FancyArrowPatch]:
    return [patch for patch in figure.axes[0].patches if isinstance(patch, FancyArrowPatch)]


def texts(figure: Figure) -> list[str]:
    return [text.get_text() for text in figure.axes[0].texts]


def arrow_labels(figure: Figure) -> list[str]:
    return [text for text in texts(figure) if text.startswith("#")]


def start_x(arrow: FancyArrowPatch) -> float:
    return float(arrow.get_path().vertices[0][0])


def test_one_arrow_per_message_labelled_with_number_method_and_id(legacy):
    figure = draw_sequence(legacy)
    assert isinstance(figure, Figure)
    assert len(arrows(figure)) == len(legacy.capture) == 9
    assert arrow_labels(figure) == [
        "#1 initialize id=1",
        "#2 result of #1 initialize",
        "#3 notifications/initialized",
        "#4 tools/list id=2",
        "#5 result of #4 tools/list",
        "#6 tools/call id=3",
        "#7 result of #6 tools/call",
        "#8 tools/call id=4",
        "#9 result of #8 tools/call (isError)",
    ]
    assert texts(figure)[:2] == ["client", "server"]


def test_requests_solid_responses_dashed_notifications_dotted(legacy):
    styles = [arrow.get_linestyle() for arrow in arrows(draw_sequence(legacy))]
    assert styles == ["-", "--", ":", "-", "--", "-", "--", "-", "--"]
    heads = [type(arrow.get_arrowstyle()).__name__ for arrow in arrows(draw_sequence(legacy))]
    assert heads[2] != heads[0]  # a notification also has an open arrowhead
    legend = [text.get_text() for text in draw_sequence(legacy).axes[0].get_legend().get_texts()]
    assert legend == ["request", "response", "notification", "error (JSON-RPC error or isError)"]


def test_arrows_go_from_sender_to_receiver(legacy):
    client_x, server_x = (start_x(arrow) for arrow in arrows(draw_sequence(legacy))[:2])
    assert client_x < server_x  # #1 starts at the client, #2 at the server


def test_the_divide_by_zero_result_is_red_and_nothing_else(legacy):
    figure = draw_sequence(legacy)
    colours = [to_hex(arrow.get_edgecolor()) for arrow in arrows(figure)]
    assert colours[-1] == RED
    assert RED not in colours[:-1]
    label = next(text for text in figure.axes[0].texts if text.get_text().startswith("#9 "))
    assert to_hex(label.get_color()) == RED


def test_a_json_rpc_error_is_red_and_dashed():
    capture = Capture(
        [
            WireMessage("client->server", {"jsonrpc": "2.0", "id": 1, "method": "nope/nothing"}),
            WireMessage("server->client", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}),
        ]
    )
    figure = draw_sequence(capture)
    error = arrows(figure)[1]
    assert (to_hex(error.get_edgecolor()), error.get_linestyle()) == (RED, "--")
    assert arrow_labels(figure)[1] == "#2 error -32601 of #1 nope/nothing"


def test_the_2026_flow_starts_with_server_discover(modern):
    figure = draw_sequence(modern.capture, title="2026-07-28")
    assert arrow_labels(figure)[:3] == [
        "#1 server/discover id=1",
        "#2 result of #1 server/discover",
        "#3 tools/list id=2",
    ]
    assert ":" not in [arrow.get_linestyle() for arrow in arrows(figure)]  # no notifications/initialized
    assert "2026-07-28" in texts(figure)


def test_a_list_of_messages_is_drawn_like_its_capture(legacy):
    assert arrow_labels(draw_sequence(legacy.capture.messages[:3])) == arrow_labels(draw_sequence(legacy))[:3]


def test_a_trace_has_four_lifelines_in_order_and_one_arrow_per_event(division):
    figure = draw_sequence(division.trace)
    actors = [text for text in figure.axes[0].texts if (text.get_gid() or "").startswith("actor-")]
    by_x = sorted(actors, key=lambda text: text.get_position()[0])
    assert [text.get_text() for text in by_x] == ["user", "client", "LLM", "server"]
    assert len(arrows(figure)) == len(division.trace)
    labels = arrow_labels(figure)
    assert labels[2] == '#3 "What is 7 divided by 0?"'
    assert labels[5] == "#6 chat.completions round 1"
    assert labels[6].startswith("#7 tool_calls: calculator_divide(")
    assert labels[8] == "#9 result of #8 tools/call (isError)"
    colours = [to_hex(arrow.get_edgecolor()) for arrow in arrows(figure)]
    assert [number for number, colour in enumerate(colours, start=1) if colour == RED] == [9]
    assert arrow_labels(draw_sequence(division)) == labels  # the LoopResult itself works too


def test_labels_never_cross_a_lifeline(division, legacy):
    for source in (division.trace, legacy):
        figure = draw_sequence(source)
        renderer = FigureCanvasAgg(figure).get_renderer()
        axes = figure.axes[0]
        lifelines = [axes.transData.transform((line.get_xdata()[0], 0))[0] for line in axes.lines]
        for text in axes.texts:
            if text.get_text().startswith("#"):
                box = text.get_window_extent(renderer)
                assert not any(box.x0 < x < box.x1 for x in lifelines), text.get_text()


def test_long_labels_are_shortened_to_fit():
    assert fit("x" * 500, 1.0).endswith("…")
    assert fit("short", 1.0) == "short"
    assert fit("two\n  lines", 3.0) == "two lines"


def test_long_sessions_are_summarised(run):
    long = run(_modern, 29)
    assert len(long.capture) >= 60
    figure = draw_sequence(long)
    assert len(arrows(figure)) == 24
    labels = arrow_labels(figure)
    assert labels[0].startswith("#1 ") and labels[-1].startswith(f"#{len(long.capture)} ")
    band = [text for text in texts(figure) if "more messages" in text]
    assert band == [f"… {len(long.capture) - 24} more messages (#13–#{len(long.capture) - 12}) …"]
    assert len(arrows(draw_sequence(long, max_messages=10))) == 10
    with pytest.raises(ValueError, match="at least 2"):
        draw_sequence(long, max_messages=1)


def test_height_grows_with_the_number_of_arrows(legacy):
    short, tall = draw_sequence(legacy.capture.messages[:3]), draw_sequence(legacy)
    assert short.get_figheight() < tall.get_figheight()
    assert short.get_figwidth() == tall.get_figwidth()


def test_savefig_and_notebook_png(legacy):
    figure = draw_sequence(legacy)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    assert buffer.getvalue().startswith(b"\x89PNG")
    assert figure._repr_png_().startswith(b"\x89PNG")  # shown in Jupyter without pyplot
    assert repr(figure) == repr(draw_sequence(legacy))  # the text/plain a notebook stores is stable


def test_chinese_text_draws_without_missing_glyph_warnings(run):
    result = run(_ask, "帮我算 1+2")
    assert drawable("帮我算 1+2 ÷ →") == "??? 1+2 ÷ →"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = draw_sequence(result.trace, title="帮我算")
        figure.savefig(io.BytesIO(), format="png")
    assert '#3 "??? 1+2"' in arrow_labels(figure)


def test_empty_and_unsupported_sources():
    assert "(no messages)" in texts(draw_sequence(Capture()))
    assert sequence_steps([]) == (("client", "server"), [])
    with pytest.raises(TypeError, match="cannot draw"):
        draw_sequence("not a capture")
