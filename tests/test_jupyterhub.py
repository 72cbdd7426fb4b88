"""The JupyterHub files in docs/jupyterhub: the token each user's server gets works on a real class server, the
Helm values and Kubernetes manifests agree with each other and with the drop-in, the systemd unit's command is one
``mcp-teach serve`` accepts, and ``mcp-teach nbgrader-course`` makes a folder real nbgrader releases from.

No hub runs here (see docs/INSTRUCTORS.md for what was and was not tried): JupyterHub loads the drop-in as it
loads any config file, with ``get_config`` in its namespace, which is what these tests do with traitlets.
"""

from __future__ import annotations

import asyncio
import configparser
import shlex
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from traitlets.config import Config

from mcp_teach.cli import build_parser, main
from mcp_teach.client import teaching_client
from mcp_teach.servers.student_tokens import STUDENT_NAME, student_token

HUB = Path(__file__).resolve().parent.parent / "docs" / "jupyterhub"
DROP_IN = HUB / "mcp_teach_tokens.py"
SECRET = "class-secret-Hq2Vw7Lp4Zx9"  # made up for these tests
MCP_TEACH = str(Path(sys.executable).with_name("mcp-teach"))
NOTES = [MCP_TEACH, "serve", "--server", "notes", "--transport", "streamable-http", "--port", "0"]


def load_drop_in(**environment: str) -> tuple[Config, dict]:
    """Run the drop-in as JupyterHub runs a config file; return the config and the file's namespace."""
    config = Config()
    namespace = {"get_config": lambda: config}
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("MCP_TEACH_CLASS_SECRET", raising=False)
        for name, value in environment.items():
            patch.setenv(name, value)
        exec(compile(DROP_IN.read_text(), str(DROP_IN), "exec"), namespace)
    return config, namespace


def token_for(config: Config, hub_user: str) -> str:
    """The MCP_AUTH_TOKEN the hub gives ``hub_user``'s server (the environment's callable, called as the hub does)."""
    make = config.Spawner.environment.get_value({})["MCP_AUTH_TOKEN"]
    return make(SimpleNamespace(user=SimpleNamespace(name=hub_user)))


async def call(url: str, token: str, tool: str, **arguments: object) -> tuple[bool, str]:
    async with teaching_client(url, auth=token) as client:
        result = await client.call_tool(tool, arguments, raise_on_error=False)
    return result.is_error, " ".join(block.text for block in result.content)


def test_the_hub_makes_the_same_token_as_class_tokens():
    config, namespace = load_drop_in(MCP_TEACH_CLASS_SECRET=SECRET)
    for name in ("ana", "ben-2", "c_3", "x" * 32):
        assert token_for(config, name) == student_token(SECRET, name)
    assert namespace["student_token"](SECRET, "ana") == student_token(SECRET, "ana")


def test_a_hub_name_that_is_no_student_name_becomes_one_and_two_names_stay_two():
    config, namespace = load_drop_in(MCP_TEACH_CLASS_SECRET=SECRET)
    made = [namespace["student_name"](name) for name in ("Ana.Lopez@uni.edu", "ana-lopez@uni.edu", "instructor")]
    assert all(STUDENT_NAME.fullmatch(name) for name in made)
    assert len(set(made)) == 3 and made[0].startswith("ana-lopez-uni-e-") and made[2] != "instructor"
    assert token_for(config, "Ana.Lopez@uni.edu") == student_token(SECRET, made[0])
    assert namespace["student_name"]("ana.lopez@uni.edu") == "ana-lopez-uni-e-g7t4co2fkfqagz6g"  # docs/INSTRUCTORS.md


def test_the_secret_may_come_from_a_root_only_file(tmp_path):
    secret_file = tmp_path / "class-secret"
    secret_file.write_text(SECRET + "\n")
    config, _ = load_drop_in(MCP_TEACH_CLASS_SECRET_FILE=str(secret_file))
    assert token_for(config, "ana") == student_token(SECRET, "ana")


def test_a_hub_token_is_the_students_own_on_a_real_class_server(cli_server, tmp_path):
    """The notes server started as the class server: the note a hub user saves is owned by that user."""
    environment = {"MCP_TEACH_NOTES_DIR": str(tmp_path), "MCP_TEACH_WRITE_HOURS": "00:00-24:00"}
    server = cli_server(NOTES, MCP_AUTH_TOKEN=SECRET, **environment)
    config, _ = load_drop_in(MCP_TEACH_CLASS_SECRET=SECRET)

    async def scenario() -> list[tuple[bool, str]]:
        return [
            await call(server.url, token_for(config, "ana"), "save_note", title="hub", content="from the hub"),
            await call(server.url, token_for(config, "Ben@uni.edu"), "read_note", note_id="hub"),
        ]

    (saved_error, saved), (refused_error, refused) = asyncio.run(scenario())
    assert not saved_error and "owner ana" in saved
    assert refused_error and "belongs to ana" in refused
    assert SECRET not in "".join(server.stderr_lines)


def test_the_helm_values_carry_the_drop_in_and_reach_the_class_server():
    values = yaml.safe_load((HUB / "z2jh-config.yaml").read_text())
    assert values["hub"]["extraConfig"]["mcp-teach-tokens"] == DROP_IN.read_text()
    secret_ref = values["hub"]["extraEnv"]["MCP_TEACH_CLASS_SECRET"]["valueFrom"]["secretKeyRef"]
    deployment, service = yaml.safe_load_all((HUB / "class-server.yaml").read_text())
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["env"][0]["valueFrom"]["secretKeyRef"] == secret_ref  # one secret for hub and server
    assert container["image"] == f"{values['singleuser']['image']['name']}:{values['singleuser']['image']['tag']}"
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    egress = values["singleuser"]["networkPolicy"]["egress"][0]
    assert egress["to"][0]["podSelector"]["matchLabels"].items() <= labels.items()
    port = egress["ports"][0]["port"]
    assert service["spec"]["selector"].items() <= labels.items() and service["spec"]["ports"][0]["port"] == port
    command = container["command"]
    served = build_parser().parse_args(command[1:])
    assert (served.transport, served.host, served.port) == ("streamable-http", "0.0.0.0", port)
    lessons = values["singleuser"]["lifecycleHooks"]["postStart"]["exec"]["command"]
    assert build_parser().parse_args(lessons[1:]).command == "lessons"


def test_the_systemd_unit_serves_on_loopback_with_the_class_secret():
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    unit.read(HUB / "mcp-teach-class.service")
    command = shlex.split(unit["Service"]["ExecStart"])
    served = build_parser().parse_args(command[1:])
    assert command[0] == "/opt/tljh/user/bin/mcp-teach"
    assert (served.command, served.transport, served.host) == ("serve", "streamable-http", "127.0.0.1")
    assert unit["Service"]["EnvironmentFile"] and unit["Service"]["DynamicUser"] == "yes"
    # Below 1024, so no other user can listen there while the service is down; the service alone may.
    assert served.port < 1024 and unit["Service"]["AmbientCapabilities"] == "CAP_NET_BIND_SERVICE"


def test_nbgrader_course_writes_the_config_and_one_assignment_per_lesson_and_keeps_edits(tmp_path, capsys):
    solutions = Path(__file__).resolve().parent.parent / "notebooks" / "solutions"
    course = tmp_path / "course"
    assert (
        main(["nbgrader-course", str(course), "--lessons", str(solutions), "--exchange", "/srv/nbgrader/exchange"]) == 0
    )
    lessons = sorted(solutions.glob("[0-9][0-9]_*.ipynb"))
    assert sorted(course.glob("source/*/*.ipynb")) == [course / "source" / p.stem / p.name for p in lessons]
    config = (course / "nbgrader_config.py").read_text()
    assert "c.Exchange.root = '/srv/nbgrader/exchange'" in config and "# YOUR CODE HERE" in config
    edited = course / "source" / lessons[0].stem / lessons[0].name
    edited.write_text("{}")
    capsys.readouterr()
    assert main(["nbgrader-course", str(course), "--lessons", str(solutions)]) == 0
    assert edited.read_text() == "{}" and f"kept  {edited}" in capsys.readouterr().out
    (tmp_path / "file").write_text("")
    assert main(["nbgrader-course", str(tmp_path / "file"), "--lessons", str(solutions)]) == 2
    assert "is a file" in capsys.readouterr().err


def test_nbgrader_course_lang_zh_makes_its_assignments_from_the_chinese_lessons(tmp_path):
    chinese = Path(__file__).resolve().parent.parent / "notebooks" / "zh" / "solutions"
    assert main(["nbgrader-course", str(tmp_path / "course"), "--lang", "zh"]) == 0
    lesson = tmp_path / "course" / "source" / "03_tools_call" / "03_tools_call.ipynb"
    assert lesson.read_bytes() == (chinese / "03_tools_call.ipynb").read_bytes()
