"""The environment is read in one place (`seams.settings`), and every entry point honours it."""

from __future__ import annotations

import json
from pathlib import Path

from servers import jev_mock
from typer.testing import CliRunner

from seams.cli import _register, app
from seams.cli._common import make_judge
from seams.judges import LocalJudge, RemoteJudge
from seams.settings import Settings

runner = CliRunner()
_register()


def test_settings_read_the_four_variables_and_treat_blank_as_unset(tmp_path) -> None:
    env = {"TYPESAFE_BASE_URL": " http://h:1 ", "TYPESAFE_API_KEY": "sk", "TYPESAFE_DEFAULT_MODEL": "",
           "SEAMS_MODEL_DIR": str(tmp_path)}
    assert Settings.from_env(env) == Settings(base_url="http://h:1", api_key="sk", default_model=None,
                                              model_dir=tmp_path)
    assert Settings.from_env({}) == Settings()


def test_the_cli_asks_the_default_model_of_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("TYPESAFE_DEFAULT_MODEL", "jev-1.13.0")
    with jev_mock() as server:
        judge = make_judge(server.url)
        assert isinstance(judge, RemoteJudge) and judge.model_id == "jev-1.13.0"
        assert make_judge(server.url, model="jev-2").model_id == "jev-2"  # an explicit option wins
    monkeypatch.delenv("TYPESAFE_DEFAULT_MODEL")
    assert make_judge("http://127.0.0.1:1").model_id == "jev-latest"


def test_seams_model_dir_chooses_the_local_model_everywhere(monkeypatch, tiny_model_dir: Path) -> None:
    monkeypatch.setenv("SEAMS_MODEL_DIR", str(tiny_model_dir))
    assert LocalJudge().model_id == "seams-tiny-test"
    result = runner.invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.output
    assert [m["name"] for m in json.loads(result.output)["models"]] == ["seams-tiny-test"]
    result = runner.invoke(app, ["ask", "--question", "Is it true?", "--state", "yes", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["model"] == "seams-tiny-test"
