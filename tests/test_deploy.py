"""The deployment files in deploy/: Kubernetes manifests against the Kubernetes JSON schemas,
the Prometheus config and rules with promtool, the compose file's references, the Grafana
dashboard against the metrics the server really exports, and ``cardarena health`` against a
real server (the container's HEALTHCHECK)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
CARDARENA = Path(sys.executable).parent / "cardarena"
REQUIRED = os.environ.get("CARDARENA_REQUIRE_E2E") == "1"
K8S_VERSION = "1.37.0"


def load_all(path: Path) -> list[dict[str, Any]]:
    with path.open() as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc is not None]


def load(path: Path) -> dict[str, Any]:
    (doc,) = load_all(path)
    return doc


# --------------------------------------------------------------------------- Kubernetes


def k8s_docs() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.name}:{doc.get('kind')}/{doc.get('metadata', {}).get('name')}", doc)
        for path in sorted((DEPLOY / "k8s").glob("*.yaml"))
        for doc in load_all(path)
    ]


@pytest.mark.parametrize(("name", "doc"), k8s_docs(), ids=[name for name, _ in k8s_docs()])
def test_k8s_manifest_matches_the_kubernetes_schema(name: str, doc: dict[str, Any]) -> None:
    import kubernetes_validate  # type: ignore[import-untyped]

    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_k8s_schema_check_rejects_a_typo() -> None:
    import kubernetes_validate

    (statefulset,) = [doc for _, doc in k8s_docs() if doc["kind"] == "StatefulSet"]
    broken = json.loads(json.dumps(statefulset))
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["grpc"]["prot"] = 1
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_k8s_statefulset_runs_the_server_as_deployed() -> None:
    docs = {doc["kind"]: doc for _, doc in k8s_docs()}
    spec = docs["StatefulSet"]["spec"]
    pod = spec["template"]["spec"]
    assert spec["replicas"] == 1
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["terminationGracePeriodSeconds"] > 5  # the server's own drain bound
    server = pod["containers"][0]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert server[probe]["grpc"]["port"] == 50051
    assert server["resources"]["requests"] and server["resources"]["limits"]
    (claim,) = spec["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in server["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == "/var/lib/cardarena"
    assert docs["ConfigMap"]["data"]["CARDARENA_DATA_DIR"] == "/var/lib/cardarena"
    services = [doc for _, doc in k8s_docs() if doc["kind"] == "Service"]
    ports = {p["name"]: p["port"] for p in services[0]["spec"]["ports"]}
    assert ports == {"grpc": 50051, "metrics": 9464}
    named = {p["name"] for c in pod["containers"] for p in c.get("ports", [])}
    assert {p["targetPort"] for s in services for p in s["spec"]["ports"]} <= named


# --------------------------------------------------------------------------- Prometheus


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        message = "promtool not installed (apt-get install prometheus)"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    return found


def test_prometheus_config_and_rules_pass_promtool(tmp_path: Path) -> None:
    tool = promtool()
    config = load(DEPLOY / "prometheus" / "prometheus.yml")
    # In the container the rules are mounted at /etc/prometheus/; check the repository's copy.
    (rules,) = config["rule_files"]
    assert Path(rules).name == "rules.yml"
    config["rule_files"] = [str(DEPLOY / "prometheus" / "rules.yml")]
    checked = tmp_path / "prometheus.yml"
    checked.write_text(yaml.safe_dump(config))
    for args in (["check", "config", str(checked)], ["check", "rules", config["rule_files"][0]]):
        done = subprocess.run(
            [tool, *args], check=False, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stdout + done.stderr
    targets = [
        t for job in config["scrape_configs"] for s in job["static_configs"] for t in s["targets"]
    ]
    assert "cardarena:9464" in targets


def test_prometheus_rules_name_exported_metrics() -> None:
    rules = load(DEPLOY / "prometheus" / "rules.yml")
    exprs = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    for expr in exprs:
        assert metric_names(expr) <= exported_metrics() | {"up"}, expr


# --------------------------------------------------------------------------- compose


def test_compose_services_ports_and_mounts() -> None:
    compose = load(DEPLOY / "compose.yaml")
    services = compose["services"]
    assert {"cardarena", "prometheus", "grafana"} <= services.keys()
    server = services["cardarena"]
    assert (DEPLOY / server["build"]["context"] / server["build"]["dockerfile"]).is_file()
    published = {str(port).rsplit(":", 1)[1] for port in server["ports"]}
    assert {"50051", "9464"} <= published
    assert server["environment"]["CARDARENA_METRICS_HOST"] == "0.0.0.0"
    assert any(str(port).endswith(":9090") for port in services["prometheus"]["ports"])
    assert any(str(port).endswith(":3000") for port in services["grafana"]["ports"])
    named_volumes = set(compose.get("volumes") or {})
    for name, service in services.items():
        for dependency in service.get("depends_on", []):
            assert dependency in services, (name, dependency)
        mode = service.get("network_mode", "")
        if mode.startswith("service:"):
            assert mode.removeprefix("service:") in services
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), (name, volume)
            else:
                assert source in named_volumes, (name, volume)
    assert "/var/lib/cardarena" in {v.split(":")[1] for v in server["volumes"]}


def test_dockerfile_and_dockerignore() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim", dockerfile, re.MULTILINE)
    assert re.search(r"^USER (?!root|0)", dockerfile, re.MULTILINE)
    assert "EXPOSE 50051 9464" in dockerfile
    assert 'VOLUME ["/var/lib/cardarena"]' in dockerfile
    assert re.search(r"^HEALTHCHECK .*\n.*cardarena\", \"health\"", dockerfile, re.MULTILINE)
    for source in re.findall(r"^COPY (?!--from)(\S+)", dockerfile, re.MULTILINE):
        assert (ROOT / source).exists(), source
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert "*" in ignore and "!pyproject.toml" in ignore


# --------------------------------------------------------------------------- Grafana

METRIC = re.compile(r"\b(cardarena_[a-z0-9_]+)\b")
SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_sum", "_count"),
    "gauge": ("",),
}


def exported_metrics() -> set[str]:
    """Every series name the server's registry exposes, labelled families with no child too."""
    from cardarena.server.metrics import REGISTRY

    names = set()
    for family in REGISTRY.collect():
        names |= {family.name + suffix for suffix in SUFFIXES[family.type]}
        names |= {sample.name for sample in family.samples}
    return names


def metric_names(expr: str) -> set[str]:
    return set(METRIC.findall(expr))


def dashboard() -> dict[str, Any]:
    with (DEPLOY / "grafana" / "dashboards" / "cardarena.json").open() as stream:
        loaded: dict[str, Any] = json.load(stream)
    return loaded


def test_dashboard_queries_name_exported_metrics() -> None:
    board = dashboard()
    assert board["uid"] and board["title"] and isinstance(board["schemaVersion"], int)
    exported = exported_metrics()
    used: set[str] = set()
    for panel in board["panels"]:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            names = metric_names(target["expr"])
            assert names, (panel["title"], target["expr"])
            assert names <= exported, (panel["title"], names - exported)
            used |= names
    families = {
        "cardarena_matches",
        "cardarena_actions_total",
        "cardarena_action_seconds_bucket",
        "cardarena_store_commit_seconds_bucket",
        "cardarena_store_commit_batch_size_sum",
        "cardarena_stream_subscribers",
        "cardarena_rpc_errors_total",
    }
    assert families <= used, families - used


def test_grafana_provisioning_points_at_the_dashboard() -> None:
    provisioning = DEPLOY / "grafana" / "provisioning"
    (source,) = load(provisioning / "datasources" / "prometheus.yaml")["datasources"]
    uids = {
        target["datasource"]["uid"]
        for panel in dashboard()["panels"]
        for target in panel["targets"]
    }
    assert uids == {source["uid"]}
    (provider,) = load(provisioning / "dashboards" / "cardarena.yaml")["providers"]
    grafana = load(DEPLOY / "compose.yaml")["services"]["grafana"]
    mounts = dict(v.rsplit(":", 2)[:2] for v in grafana["volumes"] if v.startswith("."))
    assert mounts["./grafana/dashboards"] == provider["options"]["path"]


# --------------------------------------------------------------------------- cardarena health


def health(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CARDARENA), "health", *args], check=False, capture_output=True, text=True, timeout=30
    )


@pytest.mark.integration
def test_health_command_against_a_real_server(tmp_path: Path) -> None:
    from .integration.serverproc import ServerProcess

    with ServerProcess(tmp_path / "data") as server:
        for service in ("", "cardarena.v1.MatchService"):
            done = health("--server", server.address, "--service", service)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "SERVING" in done.stdout
        unknown = health("--server", server.address, "--service", "no.such.Service")
        assert unknown.returncode == 1, unknown.stderr
        port = int(server.address.rsplit(":", 1)[1])
        wrong = health("--server", f"127.0.0.1:{port + 1}", "--timeout", "2")
        assert wrong.returncode == 2, wrong.stdout + wrong.stderr
        assert "UNAVAILABLE" in wrong.stderr
        assert server.terminate() == 0


def test_health_command_usage_errors_exit_2() -> None:
    assert health("--timeout", "-1").returncode == 2
    assert health("--bogus").returncode == 2
