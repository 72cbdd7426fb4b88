"""mcp_teach.exercises.l13: the solved lesson's own answers pass the conformance suite's scenarios, and a blank or
wrong step fails naming each failing scenario with the suite's own message and a hint.

The right answers are not retyped here: each test runs the code of the exercise's solution cell in
``notebooks/solutions/13_capstone.ipynb``, in a namespace holding what the lesson defined before it. The checks run
the pinned official suite (Node 22+); without Node they are skipped. The wrong answers the suite passes (any text, any
complete result on a retry) are tried with the suite stubbed to pass (``suite_passes``): what the check does once it
has passed runs as is, in memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from exercise_support import SolvedLesson, assert_not_attempted, failed_with
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from test_feedback_always import assert_reveals_no_answer

from mcp_teach.course.conformance import WIDTH
from mcp_teach.exercises import check, l13
from mcp_teach.exercises.catalogue import GRADING_VARIABLE, is_placeholder
from mcp_teach.exercises.check import ExerciseFailed, ExerciseNotAttempted
from mcp_teach.exercises.l13 import EXERCISES
from mcp_teach.servers import capstone

LESSON = SolvedLesson(
    "13_capstone.ipynb",
    # By the exercises every step's imports and data are defined: the lesson's cells are the module's statements.
    lambda: dict(vars(capstone)),
)


def blank(mcp: FastMCP, bus: object = None) -> None:
    """What a blank exercise cell defines: a step that adds nothing."""
    # YOUR CODE HERE
    pass


def adds_nothing(mcp: FastMCP, bus: object = None) -> None:
    """A step written that adds nothing: not the blank one, so the suite runs against it."""
    del mcp, bus


@pytest.fixture
def suite_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The conformance suite as it judges the wrong answers tried with it: every scenario passes (a student's run
    showed it). Stubbed, as each real run takes seconds; what the check does once the suite passes runs as is."""

    async def every_scenario_passes(server: FastMCP, wanted: dict) -> list:
        return []

    monkeypatch.setattr(l13, "check_server_at", every_scenario_passes)


def fails_beyond_the_suite(exercise_id: str, function: Callable[..., None], *fragments: str) -> None:
    """``function`` as the exercise's answer fails (the suite stubbed to pass), naming the mistake with
    ``fragments``, and shows none of the solution's own lines."""
    message = failed_with(exercise_id, {EXERCISES[exercise_id].answer: function}, *fragments)
    assert_reveals_no_answer(exercise_id, message)


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_a_blank_exercise_is_not_attempted(exercise_id: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    assert_not_attempted(exercise_id, capsys, monkeypatch)


def test_the_answers_are_defined_nowhere_else_in_the_lesson() -> None:
    assert LESSON.assert_answers_defined_nowhere_else() == [*EXERCISES]


def test_each_answer_is_the_package_step_it_replaces() -> None:
    assert [step.answer for step in EXERCISES.values()] == [
        "add_content_tools",
        "add_more_input_required",
        "add_watched_resources",
        "add_rich_prompts",
    ]
    assert all(callable(getattr(capstone, step.answer)) for step in EXERCISES.values())


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_the_lesson_solution_passes(exercise_id: str, node_folder: Path, run, capsys) -> None:
    namespace = run(LESSON.run_solution, exercise_id)
    check(exercise_id, namespace)
    out = capsys.readouterr().out
    wanted = [name for names in EXERCISES[exercise_id].wanted.values() for name in names]
    assert out.startswith("PASS ") and f"✔ Exercise {exercise_id} passed" in out
    assert all(name in out.replace("\n  ", " ") for name in wanted)
    assert ("a client that declared no capability gets -32021" in out) == (exercise_id == "13.2")
    assert "\nPASS in memory: " in out and "every tool and prompt described" in out.replace("\n  ", " ")


def test_a_step_that_adds_nothing_names_each_failing_scenario_with_the_suites_words(node_folder: Path) -> None:
    message = failed_with(
        "13.1",
        {"add_content_tools": adds_nothing},
        "0 of 4 pass",
        "tools-call-audio (2026-07-28) FAIL: failure tools-call-audio: Failed: Unknown tool: 'test_audio_content'",
        "tools-call-mixed-content (2026-07-28) FAIL",
        "the tiny WAV as fastmcp's Audio",
    )
    assert "tools-call-error (2026-07-28) FAIL" in message  # an unknown tool is -32602, no isError result
    # Each suite message is cut to its first sentence: an unknown tool's "This server has: ..." lists every tool.
    assert "This server has" not in message and "Unknown tool: 'test_error_handling'." in message


def test_a_step_that_adds_nothing_fits_a_screen(node_folder: Path) -> None:
    with pytest.raises(ExerciseFailed) as failure:
        check("13.1", {"add_content_tools": adds_nothing})
    assert len(failure.value.lines) <= 20 and all(len(line) <= WIDTH for line in failure.value.lines[3:])


def content_tools(
    *,
    order: tuple[int, ...] = (0, 1, 2),
    documented: bool = True,
    embedded_text: str = "This is an embedded resource content.",
    mixed_value: int | str = 123,
    error: type[Exception] = ToolError,
    error_message: str = "This tool intentionally returns an error for testing",
) -> Callable[[FastMCP], None]:
    """Exercise 13.1 as a student may write it: the mixed blocks in ``order``; docstrings, or none; the embedded
    resource's text, the mixed resource's value and the error raised as given, or others."""

    def add_content_tools(mcp: FastMCP) -> None:
        def embedded(uri: str, mime_type: str, text: str) -> mcp_types.EmbeddedResource:
            contents = mcp_types.TextResourceContents(uri=uri, mime_type=mime_type, text=text)
            return mcp_types.EmbeddedResource(type="resource", resource=contents)

        def test_audio_content() -> capstone.Audio:
            return capstone.Audio(data=capstone.WAV_TINY, format="wav")

        def test_embedded_resource() -> mcp_types.EmbeddedResource:
            return embedded("test://embedded-resource", "text/plain", embedded_text)

        def test_multiple_content_types() -> list[Any]:
            blocks = [
                "Multiple content types test:",
                capstone.Image(data=capstone.PNG_1X1, format="png"),
                embedded(
                    "test://mixed-content-resource",
                    "application/json",
                    json.dumps({"test": "data", "value": mixed_value}),
                ),
            ]
            return [blocks[at] for at in order]

        def test_error_handling() -> str:
            raise error(error_message)

        for tool in (test_audio_content, test_embedded_resource, test_multiple_content_types, test_error_handling):
            tool.__doc__ = f"Tests {tool.__name__[5:].replace('_', ' ')}." if documented else None
            mcp.tool(tool, output_schema=None)

    return add_content_tools


def test_a_correct_variant_of_13_1_passes(node_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Other docstrings, a helper for the embedded resources, json.dumps for the JSON text (the student's a_ok)."""
    check("13.1", {"add_content_tools": content_tools()})
    assert "✔ Exercise 13.1 passed" in capsys.readouterr().out


@pytest.mark.wrong_answer("13.1")
def test_mixed_content_in_the_wrong_order_fails_13_1(node_folder: Path) -> None:
    """The suite's tools-call-mixed-content only looks for each kind of block (the student's a3)."""
    failed_with(
        "13.1",
        {"add_content_tools": content_tools(order=(1, 0, 2))},
        "the blocks test_multiple_content_types returns",
        "expected text, image, resource, in that order",
        "found image, text, resource",
    )


@pytest.mark.wrong_answer("13.1")
def test_tools_without_a_docstring_fail_13_1_naming_them(node_folder: Path) -> None:
    """The step's scenarios pass; the whole-server run's tools-list would fail, naming a tool by its number only."""
    failed_with(
        "13.1",
        {"add_content_tools": content_tools(documented=False)},
        "the description of each tool",
        "tools-list requires it",
        "found none for test_audio_content, test_embedded_resource, test_multiple_content_types and test_error_",
        "give test_audio_content, test_embedded_resource",
    )


@pytest.mark.wrong_answer("13.1")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        (  # a word dropped from the embedded resource's text: the suite wants any text
            {"embedded_text": "This is embedded resource content."},
            (
                "tools/call test_embedded_resource",
                "expected content[0].resource.text 'This is an embedded resource content.'",
                "found content[0].resource.text 'This is embedded resource content.'",
                "the resource's URI, mimeType and text as in the task, word for word",
            ),
        ),
        (  # the mixed resource's JSON with the value as text
            {"mixed_value": "123"},
            (
                "tools/call test_multiple_content_types",
                """expected content[2].resource.text '{"test": "data", "value": 123}'""",
                """found content[2].resource.text '{"test": "data", "value": "123"}'""",
                "each block as in the task",
            ),
        ),
        (  # an error message of the student's own
            {"error_message": "Something went wrong"},
            (
                "tools/call test_error_handling",
                "expected content[0].text 'This tool intentionally returns an error for testing'",
                "found content[0].text 'Something went wrong'",
                "raise ToolError with the message as in the task",
            ),
        ),
        (  # the task's message, raised as a ValueError: fastmcp adds its own words
            {"error": ValueError},
            (
                "found content[0].text \"Error calling tool 'test_error_handling': This tool intentionally",
                "raise ToolError with the message as in the task",
            ),
        ),
    ],
    ids=["embedded-text", "mixed-value-as-text", "error-message", "error-not-a-tool-error"],
)
def test_a_wrong_text_the_suite_passes_fails_13_1(suite_passes: None, wrong: dict, fragments: tuple) -> None:
    fails_beyond_the_suite("13.1", content_tools(**wrong), *fragments)


@pytest.mark.wrong_answer("13.2")
def test_multiple_inputs_without_a_request_state_fails_13_2_and_the_hint_says_so(node_folder: Path) -> None:
    """The exercise and the hint both say the suite wants a requestState here (the student's b_oks, without it)."""

    def stateless(mcp: FastMCP) -> None:
        capstone.add_more_input_required(mcp)
        mcp.local_provider.remove_tool("test_input_required_result_multiple_inputs")

        @mcp.tool(output_schema=None)
        async def test_input_required_result_multiple_inputs(ctx: Context) -> Any:
            """Three questions in one result, but no requestState."""
            if {"user_name", "greeting", "client_roots"} <= (ctx.input_responses or {}).keys():
                return "All inputs received."
            asks = {
                "user_name": capstone.name_question(),
                "greeting": capstone.sampling_request("Generate a greeting", 50),
                "client_roots": mcp_types.ListRootsRequest(),
            }
            capstone.answerable(ctx, *asks.values())
            return mcp_types.InputRequiredResult(input_requests=asks)

    failed_with(
        "13.2",
        {"add_more_input_required": stateless},
        "input-required-result-multiple-input-requests (2026-07-28) FAIL",
        "InputRequiredResult missing requestState",
        "with a request_state (the suite requires one here)",
    )


def replacing(name: str, tool: Callable[..., Any]) -> Callable[[FastMCP], None]:
    """Exercise 13.2 as the lesson solves it, with a student's ``tool`` in place of its tool ``name``."""

    def add_more_input_required(mcp: FastMCP) -> None:
        capstone.add_more_input_required(mcp)
        mcp.local_provider.remove_tool(name)
        mcp.tool(tool, name=name, output_schema=None)

    return add_more_input_required


def sampling_retried(retry: Callable[[mcp_types.CreateMessageResult], Any]) -> Callable[[FastMCP], None]:
    """13.2 with a sampling tool that asks as the task says and returns ``retry(answer)`` on the retry."""

    async def test_input_required_result_sampling(ctx: Context) -> Any:
        """One sampling request, answered on the retry."""
        answer = (ctx.input_responses or {}).get("capital_question")
        if answer is not None:
            return retry(answer)
        question = capstone.sampling_request(capstone.SAMPLING_PROMPT)
        capstone.answerable(ctx, question)
        return mcp_types.InputRequiredResult(input_requests={"capital_question": question})

    return replacing("test_input_required_result_sampling", test_input_required_result_sampling)


def multi_round_ending(end: Callable[[str, str], str]) -> Callable[[FastMCP], None]:
    """13.2 with a multi-round tool that asks as the task says and returns ``end(name, colour)`` in round 3."""

    async def test_input_required_result_multi_round(ctx: Context) -> Any:
        """Three rounds; requestState carries the round and the name."""
        state = json.loads(ctx.request_state or '{"round": 1}')
        answers = ctx.input_responses or {}
        if state["round"] == 1 and "step1" in answers:
            state = {"round": 2, "name": capstone.answered(answers["step1"], "name")}
        elif state["round"] == 2 and "step2" in answers:
            return end(state["name"], capstone.answered(answers["step2"], "color"))
        color = capstone.elicit_form("Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"])
        question = capstone.name_question("Step 1: What is your name?") if state["round"] == 1 else color
        capstone.answerable(ctx, question)
        return mcp_types.InputRequiredResult(
            input_requests={f"step{state['round']}": question}, request_state=json.dumps(state)
        )

    return replacing(l13.MULTI_ROUND, test_input_required_result_multi_round)


async def roots_as_the_suite_has_them(ctx: Context) -> Any:
    """One roots/list request; the retry says what the suite's client has, whatever the answer."""
    if "client_roots" in (ctx.input_responses or {}):
        return "Client exposed 1 root(s)."
    question = mcp_types.ListRootsRequest()
    capstone.answerable(ctx, question)
    return mcp_types.InputRequiredResult(input_requests={"client_roots": question})


def not_written_yet(answer: Any) -> str:
    raise RuntimeError("the retry is not written yet")


SAMPLING = "tools/call test_input_required_result_sampling (the check answers every question)"


@pytest.mark.wrong_answer("13.2")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        (  # the suite takes an error result for a complete one
            sampling_retried(lambda answer: 1 / 0),
            (SAMPLING, "expected a result", "division by zero", "it raised: the retry finds the CreateMessageResult"),
        ),
        (
            sampling_retried(not_written_yet),
            (SAMPLING, "found an error result:", "the retry is not written yet", "CreateMessageResult"),
        ),
        (  # the answer's content is a TextContent, not a str
            sampling_retried(lambda answer: "Model said: " + answer.content),
            (SAMPLING, "found an error result:", 'concatenate str (not "TextContent")', "then its content's text"),
        ),
        (
            sampling_retried(lambda answer: answer.content.text),
            (
                SAMPLING,
                "expected content[0].text 'Model said: It is Paris, on the Seine.'",
                "found content[0].text 'It is Paris, on the Seine.'",
                "the task's prefix",
            ),
        ),
        (  # the suite's model answer, typed in
            sampling_retried(lambda answer: "Model said: The capital of France is Paris."),
            ("found content[0].text 'Model said: The capital of France is Paris.'", "its content's text"),
        ),
        (  # the suite's client has one root
            replacing("test_input_required_result_list_roots", roots_as_the_suite_has_them),
            (
                "tools/call test_input_required_result_list_roots",
                "expected content[0].text 'Client exposed 2 root(s).'",
                "found content[0].text 'Client exposed 1 root(s).'",
                "counts the roots of the ListRootsResult it was given",
            ),
        ),
        (  # round 3 answers with the colour alone
            multi_round_ending(lambda name, color: color),
            (
                f"tools/call {l13.MULTI_ROUND}",
                "expected content[0].text 'Ada likes teal.'",
                "found content[0].text 'teal'",
                "the name requestState carried from round 1 and the colour answered in round 2",
            ),
        ),
        (  # the suite's answers, typed in
            multi_round_ending(lambda name, color: "Alice likes blue."),
            ("found content[0].text 'Alice likes blue.'", "the name requestState carried from round 1"),
        ),
    ],
    ids=[
        "zero-division",
        "runtime-error",
        "type-error",
        "no-prefix",
        "suite-answer-typed",
        "roots-count-typed",
        "colour-only",
        "multi-round-suite-answers-typed",
    ],
)
def test_a_retry_the_suite_passes_fails_13_2(suite_passes: None, wrong: Callable, fragments: tuple) -> None:
    fails_beyond_the_suite("13.2", wrong, *fragments)


def watched_resources(
    *,
    data: str = "Data for ID: {id}",
    awaited: bool = True,
    numeric_id: bool = False,
    compact: bool = False,
    watched_text: str = "Watched resource content",
    watched_mime_type: str = "text/plain",
    documented: bool = True,
) -> Callable[[FastMCP, Any], None]:
    """Exercise 13.3 as a student may write it: the template's ``data`` text; the trigger awaiting the update or
    not; the id as a number; the JSON written compactly; the watched resource's text and mimeType; docstrings or
    none."""

    def add_watched_resources(mcp: FastMCP, bus: Any) -> None:
        @mcp.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
        def template_data(id: str) -> str:
            """The template."""
            value = {"id": int(id) if numeric_id else id, "templateTest": True, "data": data.format(id=id)}
            return json.dumps(value, separators=(",", ":") if compact else None)

        @mcp.resource(capstone.WATCHED_URI, name="watched-resource", mime_type=watched_mime_type)
        def watched() -> str:
            """Watched."""
            return watched_text

        watchers, _ = capstone.serve_subscriptions(mcp, bus)

        async def test_trigger_resource_update() -> str:
            if awaited:
                await capstone.announce_update(bus, watchers, capstone.WATCHED_URI)
            else:
                capstone.announce_update(bus, watchers, capstone.WATCHED_URI).close()  # forgot await: never runs
            return "resource updated"

        test_trigger_resource_update.__doc__ = "Says the watched resource changed." if documented else None
        mcp.tool(test_trigger_resource_update, output_schema=None)

    return add_watched_resources


def test_a_correct_variant_of_13_3_passes(node_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON written compactly, as the suite's own example shows it; other docstrings."""
    check("13.3", {"add_watched_resources": watched_resources(compact=True)})
    out = capsys.readouterr().out
    assert "the template's JSON; the trigger tells a subscriber" in out and "✔ Exercise 13.3 passed" in out


@pytest.mark.wrong_answer("13.3")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        (  # the id as a number, where the URI gives text (the suite only looks for "123" in the text)
            {"numeric_id": True},
            (
                "reading test://template/7/data",
                'expected {"id": "7", "templateTest": true, "data": "Data for ID: 7"} as application/json',
                "found the id 7, not a string",
                "the id as the URI gives it, a string",
            ),
        ),
        (  # the watched resource's text of the student's own
            {"watched_text": "Watched resource"},
            (
                "resources/read test://watched-resource",
                "expected contents[0].text 'Watched resource content'",
                "found contents[0].text 'Watched resource'",
                "word for word",
            ),
        ),
        (  # a mimeType of the student's own
            {"watched_mime_type": "text/markdown"},
            (
                "expected contents[0].mimeType 'text/plain'",
                "found contents[0].mimeType 'text/markdown'",
                "mimeType and text as in the task",
            ),
        ),
    ],
    ids=["numeric-id", "watched-text", "watched-mime-type"],
)
def test_a_resource_the_suite_passes_fails_13_3(suite_passes: None, wrong: dict, fragments: tuple) -> None:
    fails_beyond_the_suite("13.3", watched_resources(**wrong), *fragments)


@pytest.mark.wrong_answer("13.3")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        (  # the student's c3, its first mistake: the suite only looks for the id in the text
            {"data": "data {id}"},
            (
                "reading test://template/7/data",
                'expected {"id": "7", "templateTest": true, "data": "Data for ID: 7"} as application/json',
                """found the text '{"id": "7", "templateTest": true, "data": "data 7"}'""",
                "key for key and word for word",
            ),
        ),
        (  # c3's second mistake: announce_update(...) without await sends nothing
            {"awaited": False},
            (
                "a client subscribed to test://watched-resource (2025-11-25) calls test_trigger_resource_update",
                "expected one notifications/resources/updated for test://watched-resource",
                "found no notification",
                "await announce_update(bus, watchers, WATCHED_URI)",
            ),
        ),
        (  # the student's c_ok: the trigger without a docstring
            {"documented": False},
            ("the description of each tool", "found none for test_trigger_resource_update", "give test_trigger_"),
        ),
    ],
    ids=["template-text", "no-await", "no-docstring"],
)
def test_a_wrong_answer_the_suite_passes_fails_13_3(node_folder: Path, wrong: dict, fragments: tuple) -> None:
    failed_with("13.3", {"add_watched_resources": watched_resources(**wrong)}, *fragments)


def rich_prompts(
    *,
    matches: Callable[[str, str], bool] = str.startswith,
    uri: str | None = None,
    mime_type: str | None = "text/plain",
    image_texts: tuple[str, ...] = ("Please analyze the image above.",),
    image_first: bool = True,
    documented: bool = True,
) -> Callable[[FastMCP], None]:
    """Exercise 13.4 as a student may write it: ``matches(word, typed)`` picks the completions; the embedded
    resource's URI fixed (``uri``) or the argument; its ``mime_type``; the image prompt's ``image_texts``, after the
    image or before it; a docstring for that prompt or none."""

    def add_rich_prompts(mcp: FastMCP) -> None:
        def test_prompt_with_embedded_resource(resourceUri: str) -> list[capstone.Message]:
            contents = mcp_types.TextResourceContents(
                uri=uri or resourceUri, mime_type=mime_type, text="Embedded resource content for testing."
            )
            embedded = mcp_types.EmbeddedResource(type="resource", resource=contents)
            return [capstone.Message(embedded), capstone.Message("Please process the embedded resource above.")]

        test_prompt_with_embedded_resource.__doc__ = "Embeds a resource." if documented else None
        mcp.prompt(test_prompt_with_embedded_resource)

        @mcp.prompt
        def test_prompt_with_image() -> list[capstone.Message]:
            """Shows an image."""
            image = capstone.Message(capstone.Image(data=capstone.PNG_1X1, format="png").to_image_content())
            texts = [capstone.Message(text) for text in image_texts]
            return [image, *texts] if image_first else [*texts, image]

        @mcp.completion
        def complete(ref: Any, argument: mcp_types.CompletionArgument, context: Any) -> list[str]:
            return [word for word in ("testing", "test", "party", "park", "paris") if matches(word, argument.value)]

    return add_rich_prompts


def test_a_correct_variant_of_13_4_passes(node_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The words in another order, other docstrings (the student's d_ok)."""
    check("13.4", {"add_rich_prompts": rich_prompts()})
    out = capsys.readouterr().out
    assert "completion by prefix; the given resourceUri embedded" in out
    assert "✔ Exercise 13.4 passed" in out


@pytest.mark.wrong_answer("13.4")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        (  # the student's d1: every word, whatever was typed
            {"matches": lambda word, typed: True},
            ("completion/complete", "'par' typed", "expected paris, park, party", "found paris, park, party, test,"),
        ),
        (  # d3: a word that holds what was typed anywhere
            {"matches": lambda word, typed: typed in word},
            ("'ar' typed", "expected no values (no word starts with it)", "found paris, park, party", "startswith"),
        ),
        (  # d3's other mistake: a fixed URI
            {"uri": "test://embedded"},
            (
                "prompts/get test_prompt_with_embedded_resource with resourceUri 'test://any/resource-uri'",
                "expected messages[0].content.resource.uri 'test://any/resource-uri'",
                "found messages[0].content.resource.uri 'test://embedded'",
                "uri=resourceUri",
            ),
        ),
        (  # d2's first mistake: no mimeType
            {"mime_type": None},
            (
                "expected messages[0].content.resource.mimeType 'text/plain'",
                "found messages[0].content.resource.mimeType None",
            ),
        ),
        (  # a prompt without a docstring: the whole-server run's prompts-list fails
            {"documented": False},
            (
                "the description of each prompt",
                "prompts-list requires it",
                "found none for test_prompt_with_embedded_resource",
            ),
        ),
    ],
    ids=["every-word", "substring", "fixed-uri", "no-mime-type", "no-docstring"],
)
def test_a_wrong_answer_the_suite_passes_fails_13_4(node_folder: Path, wrong: dict, fragments: tuple) -> None:
    failed_with("13.4", {"add_rich_prompts": rich_prompts(**wrong)}, *fragments)


IMAGE_PROMPT = "prompts/get test_prompt_with_image"


@pytest.mark.wrong_answer("13.4")
@pytest.mark.parametrize(
    ("wrong", "fragments"),
    [
        (  # a question of the student's own: the suite only looks for an image
            {"image_texts": ("What is in this image?",)},
            (
                IMAGE_PROMPT,
                "expected messages[1].content.text 'Please analyze the image above.'",
                "found messages[1].content.text 'What is in this image?'",
                "then the text as in the task, word for word",
            ),
        ),
        (  # the image alone
            {"image_texts": ()},
            (IMAGE_PROMPT, "expected the number of messages 2", "found the number of messages 1", "two Messages"),
        ),
        (  # the text first
            {"image_first": False},
            (
                IMAGE_PROMPT,
                "expected messages[0].content.type 'image'",
                "found messages[0].content.type 'text'",
                "the PNG as an image, then the text",
            ),
        ),
    ],
    ids=["image-other-text", "image-no-text", "text-first"],
)
def test_an_image_prompt_the_suite_passes_fails_13_4(suite_passes: None, wrong: dict, fragments: tuple) -> None:
    fails_beyond_the_suite("13.4", rich_prompts(**wrong), *fragments)


@pytest.mark.wrong_answer("13.2")
def test_asking_a_client_for_what_it_did_not_declare_fails_13_2(node_folder: Path, monkeypatch) -> None:
    """The suite's client declares every capability, so it passes such a server: the check's own client does not."""
    monkeypatch.setattr(capstone, "answerable", lambda ctx, *requests: None)  # every question sent, declared or not
    failed_with(
        "13.2",
        {"add_more_input_required": capstone.add_more_input_required},
        "test_input_required_result_sampling, called by a client that declared no capability",
        "expected the JSON-RPC error -32021 (MissingRequiredClientCapability, 2026-07-28 basic/index), no request",
        "found an InputRequiredResult asking sampling/createMessage (keys: capital_question)",
        "answerable(ctx, ...)",
    )


@pytest.mark.wrong_answer("13.2")
def test_a_multi_round_tool_that_starts_over_on_a_missing_answer_fails_13_2(node_folder: Path) -> None:
    def starting_over(mcp: FastMCP) -> None:
        capstone.add_more_input_required(mcp)
        mcp.local_provider.remove_tool("test_input_required_result_multi_round")

        @mcp.tool(name="test_input_required_result_multi_round", output_schema=None)
        async def multi_round(ctx: Context) -> Any:
            """Three rounds, but anything unexpected starts again at round 1."""
            state = json.loads(ctx.request_state) if ctx.request_state else {"round": 0}
            answers = ctx.input_responses or {}
            if state["round"] == 1 and "step1" in answers:
                color = capstone.elicit_form(
                    "Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"]
                )
                next_state = json.dumps({"round": 2, "name": capstone.answered(answers["step1"], "name")})
                capstone.answerable(ctx, color)
                return mcp_types.InputRequiredResult(input_requests={"step2": color}, request_state=next_state)
            if state["round"] == 2 and "step2" in answers:
                return f"{state.get('name')} likes {capstone.answered(answers['step2'], 'color')}."
            first = capstone.name_question("Step 1: What is your name?")
            capstone.answerable(ctx, first)
            return mcp_types.InputRequiredResult(input_requests={"step1": first}, request_state='{"round": 1}')

    failed_with(
        "13.2",
        {"add_more_input_required": starting_over},
        "test_input_required_result_multi_round round 2 retried without its answer",
        "expected the round-2 question (step2) again",
        "found an InputRequiredResult asking elicitation/create (keys: step1)",
        "start at round 1 only when the state is missing",
    )


def test_a_blank_step_is_not_attempted_and_shows_no_hint(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first Run All of the blank lesson: no suite run, no hint that holds the answer."""
    check("13.1", {"add_content_tools": blank})
    out = capsys.readouterr().out
    assert "13.1 — not attempted yet" in out and "EmbeddedResource" not in out and "hint" not in out.lower()
    monkeypatch.setenv(GRADING_VARIABLE, "autograde")
    with pytest.raises(ExerciseNotAttempted, match=r"13\.2 — not attempted yet: .* body of `add_more_input_required`"):
        check("13.2", {"add_more_input_required": blank})
    assert not is_placeholder(capstone.add_more_input_required)


def test_a_step_that_raises_is_reported_before_the_suite_runs() -> None:
    def broken(mcp: FastMCP, bus: object) -> None:
        raise ToolError("typo in a decorator")

    failed_with("13.3", {"add_watched_resources": broken}, "building the server", "ToolError: typo in a decorator")


def test_an_answer_that_is_not_a_function_fails() -> None:
    failed_with("13.4", {"add_rich_prompts": "add_rich_prompts"}, "add_rich_prompts", "a function")
