"""deploy/: the image, the compose file and the Kubernetes manifests say what they promise."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from service.cli import run

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
#: Not secrets, and only the digest job needs it (checked when that job starts).
#: ROOFGUARD_GITHUB_BOT_LOGIN: the client learns the login from GET /user when it is unset.
OPTIONAL = {"ROOFGUARD_DIGEST_REPO", "ROOFGUARD_GITHUB_BOT_LOGIN"}


def test_image_is_slim_non_root_health_checked_and_migrates_first() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.\d+-slim", text, re.M)
    assert re.search(r"^USER 10001", text, re.M)
    assert "HEALTHCHECK" in text and "/healthz" in text
    cmd = text[text.index("\nCMD") :]
    assert cmd.index("roofguard db upgrade") < cmd.index("exec roofguard serve")


def test_compose_takes_secrets_from_the_environment_without_defaults() -> None:
    text = (DEPLOY / "compose.yml").read_text()
    variables = re.findall(r"\$\{(\w+)(:?[?-])?", text)
    assert variables and all(op == ":?" or name in OPTIONAL for name, op in variables), variables
    services = yaml.safe_load(text)["services"]
    assert services["db"]["healthcheck"]["test"]
    assert services["roofguard"]["depends_on"]["db"]["condition"] == "service_healthy"
    assert "ROOFGUARD_DATABASE_URL" in services["roofguard"]["environment"]


def _manifests() -> dict[str, dict]:
    docs = [
        d
        for f in sorted((DEPLOY / "k8s").glob("*.yaml"))
        for d in yaml.safe_load_all(f.read_text())
    ]
    return {d["kind"]: d for d in docs if d and "kind" in d}


def test_kubernetes_manifests_have_probes_a_cronjob_and_a_secret_template() -> None:
    kinds = _manifests()
    assert {"Deployment", "Service", "CronJob", "Secret"} <= set(kinds)
    pod = kinds["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["initContainers"][0]["command"] == ["roofguard", "db", "upgrade"]
    assert kinds["CronJob"]["spec"]["schedule"] == "0 6 * * 1"
    assert set(kinds["Secret"]["stringData"].values()) == {"REPLACE_ME"}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kustomization_renders() -> None:
    out = subprocess.run(
        ["kubectl", "kustomize", str(DEPLOY / "k8s")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    kinds = [d["kind"] for d in yaml.safe_load_all(out) if d]
    assert sorted(kinds) == ["CronJob", "Deployment", "Service"]


def test_the_commands_the_manifests_run_exist(capsys) -> None:
    for argv in (["serve", "--help"], ["db", "upgrade", "--help"], ["digest", "--help"]):
        assert run(argv) == 0
    helps = capsys.readouterr().out
    for flag in ("--host", "--port", "--workers", "--since", "--post", "--repo"):
        assert flag in helps
