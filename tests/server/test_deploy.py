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
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..serverproc import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
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

K8S = DEPLOY / "k8s"
# The replicated form on PostgreSQL; deploy/k8s/ itself is the single-process form.
REPLICATED = K8S / "replicated"
Doc = dict[str, Any]


def k8s_path(path: Path) -> str:
    return path.relative_to(K8S).as_posix()


def k8s_docs(folder: Path | None = None) -> list[tuple[str, Doc]]:
    """Every document under deploy/k8s/, subfolders included, or only those directly in
    ``folder`` (one form: what ``kubectl apply -f folder`` applies)."""
    return [
        (f"{k8s_path(path)}:{doc.get('kind')}/{doc.get('metadata', {}).get('name')}", doc)
        for path in sorted(K8S.rglob("*.yaml"))
        if folder is None or path.parent == folder
        for doc in load_all(path)
    ]


def only(folder: Path, kind: str) -> Doc:
    (doc,) = [doc for _, doc in k8s_docs(folder) if doc["kind"] == kind]
    return doc


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    """Whether an equality selector (a Service's, or matchLabels) picks pods with ``labels``;
    an empty selector counts as selecting nothing (a Service without one has no endpoints)."""
    return bool(selector) and selector.items() <= labels.items()


@pytest.mark.parametrize(("name", "doc"), k8s_docs(), ids=[name for name, _ in k8s_docs()])
def test_k8s_manifest_matches_the_kubernetes_schema(name: str, doc: Doc) -> None:
    import kubernetes_validate  # type: ignore[import-untyped]

    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_k8s_docs_cover_both_forms() -> None:
    found = {name.split(":", 1)[0] for name, _ in k8s_docs()}
    on_disk = {k8s_path(path) for path in K8S.rglob("*.y*ml")}
    assert found == on_disk  # no .yml left out of the schema check
    kinds = {(name.split(":", 1)[0].count("/"), doc["kind"]) for name, doc in k8s_docs()}
    assert {(0, "StatefulSet"), (1, "Deployment"), (1, "PodDisruptionBudget")} <= kinds


@pytest.mark.parametrize("kind", ["StatefulSet", "Deployment"])
def test_k8s_schema_check_rejects_a_typo(kind: str) -> None:
    import kubernetes_validate

    (workload,) = [doc for _, doc in k8s_docs() if doc["kind"] == kind]
    kubernetes_validate.validate(workload, K8S_VERSION, strict=True)
    broken = json.loads(json.dumps(workload))
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["grpc"]["prot"] = 1
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_k8s_statefulset_runs_the_server_as_deployed() -> None:
    docs = {doc["kind"]: doc for _, doc in k8s_docs(K8S)}
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
    services = [doc for _, doc in k8s_docs(K8S) if doc["kind"] == "Service"]
    ports = {p["name"]: p["port"] for p in services[0]["spec"]["ports"]}
    assert ports == {"grpc": 50051, "metrics": 9464}
    named = {p["name"] for c in pod["containers"] for p in c.get("ports", [])}
    assert {p["targetPort"] for s in services for p in s["spec"]["ports"]} <= named


def replica_pod() -> Doc:
    pod: Doc = only(REPLICATED, "Deployment")["spec"]["template"]
    return pod


def replica_container() -> Doc:
    containers: list[Doc] = replica_pod()["spec"]["containers"]
    (container,) = [c for c in containers if c["name"] == "cardarena"]
    return container


def replica_env() -> list[Doc]:
    env: list[Doc] = replica_container()["env"]
    return env


def grpc_port(container: Doc) -> int:
    (port,) = [p["containerPort"] for p in container["ports"] if p["name"] == "grpc"]
    assert isinstance(port, int)
    return port


def test_replicas_take_the_store_url_from_the_example_secret() -> None:
    env = {var["name"]: var for var in replica_env()}
    store = env["CARDARENA_STORE"]
    assert "value" not in store  # never the URL (with its password) in the Deployment
    reference = store["valueFrom"]["secretKeyRef"]
    secret = load(REPLICATED / "secret.example.yaml")
    assert secret["kind"] == "Secret"
    assert reference["name"] == secret["metadata"]["name"] == "cardarena-postgres"
    assert reference["key"] == "url"
    assert reference.get("optional") is not True  # no replica starts on the SQLite default
    assert secret["stringData"][reference["key"]].startswith("postgresql://")


def test_replicas_advertise_their_pod_ip_defined_before_use() -> None:
    env = replica_env()
    names = [var["name"] for var in env]
    assert len(names) == len(set(names))
    by_name = {var["name"]: var for var in env}
    assert by_name["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    port = grpc_port(replica_container())
    advertise = by_name["CARDARENA_ADVERTISE"]["value"]
    assert advertise == f"$(POD_IP):{port}"
    assert by_name["CARDARENA_LISTEN"]["value"] == f"0.0.0.0:{port}"
    # Kubernetes expands $(VAR) only for variables defined earlier in the list; a later or
    # unknown one stays literally "$(VAR)".
    for index, var in enumerate(env):
        for used in re.findall(r"\$\((\w+)\)", var.get("value", "")):
            assert used in names[:index], (var["name"], used)
    assert names.index("POD_IP") < names.index("CARDARENA_ADVERTISE")


def test_replicas_probe_the_grpc_health_service_on_the_grpc_port() -> None:
    container = replica_container()
    port = grpc_port(container)
    readiness = container["readinessProbe"]
    assert set(readiness) & {"httpGet", "tcpSocket", "exec"} == set()
    assert readiness["grpc"]["port"] == port
    assert readiness["grpc"]["service"] == "cardarena.v1.MatchService"
    for probe in ("livenessProbe", "startupProbe"):
        assert container[probe]["grpc"]["port"] == port, probe


def test_replica_selectors_match_the_pod_labels() -> None:
    deployment = only(REPLICATED, "Deployment")
    labels = replica_pod()["metadata"]["labels"]
    assert set(deployment["spec"]["selector"]) == {"matchLabels"}
    assert selects(deployment["spec"]["selector"]["matchLabels"], labels)
    services = {
        doc["metadata"]["name"]: doc for _, doc in k8s_docs(REPLICATED) if doc["kind"] == "Service"
    }
    assert set(services) == {"cardarena-replicas", "cardarena-replicas-headless"}
    assert services["cardarena-replicas"]["spec"].get("type", "ClusterIP") == "ClusterIP"
    assert services["cardarena-replicas"]["spec"].get("clusterIP") != "None"
    assert services["cardarena-replicas-headless"]["spec"]["clusterIP"] == "None"
    named = {p["name"] for p in replica_container()["ports"]}
    for name, service in services.items():
        assert selects(service["spec"]["selector"], labels), name
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= named, name
        assert "grpc" in {p["name"] for p in service["spec"]["ports"]}, name
    ports = {p["name"]: p["port"] for p in services["cardarena-replicas"]["spec"]["ports"]}
    assert ports == {"grpc": 50051, "metrics": 9464}
    budget = only(REPLICATED, "PodDisruptionBudget")["spec"]
    assert set(budget["selector"]) == {"matchLabels"}
    assert selects(budget["selector"]["matchLabels"], labels)
    # The two forms do not pick up each other's pods (a shared namespace stays sane).
    statefulset = only(K8S, "StatefulSet")["spec"]
    single_labels = statefulset["template"]["metadata"]["labels"]
    assert not selects(statefulset["selector"]["matchLabels"], labels)
    assert not selects(deployment["spec"]["selector"]["matchLabels"], single_labels)
    for _, doc in k8s_docs(K8S):
        if doc["kind"] == "Service":
            assert not selects(doc["spec"]["selector"], labels), doc["metadata"]["name"]


def test_replicas_roll_spread_and_drain_safely() -> None:
    spec = only(REPLICATED, "Deployment")["spec"]
    pod = spec["template"]["spec"]
    assert spec["replicas"] == 3
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
    }
    budget = only(REPLICATED, "PodDisruptionBudget")["spec"]
    assert budget["minAvailable"] == 2
    assert budget["minAvailable"] < spec["replicas"]  # else a node drain waits forever
    env = {var["name"]: var for var in replica_env()}
    lease = int(env["CARDARENA_LEASE_SECONDS"]["value"])
    assert pod["terminationGracePeriodSeconds"] > 10
    assert pod["terminationGracePeriodSeconds"] > 5 + lease  # the drain, then the lease
    spread = [
        c
        for c in pod.get("topologySpreadConstraints", [])
        if c["topologyKey"] == "kubernetes.io/hostname"
        and selects(c["labelSelector"]["matchLabels"], spec["template"]["metadata"]["labels"])
    ]
    anti = pod.get("affinity", {}).get("podAntiAffinity", {})
    preferred = anti.get("preferredDuringSchedulingIgnoredDuringExecution", [])
    assert spread or any(
        term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname" for term in preferred
    )
    # Stateless: no claim, and the container is the StatefulSet's one.
    assert not any("persistentVolumeClaim" in volume for volume in pod.get("volumes", []))
    single = only(K8S, "StatefulSet")["spec"]["template"]["spec"]
    assert pod["securityContext"] == single["securityContext"]
    container = replica_container()
    (single_container,) = single["containers"]
    for key in ("image", "imagePullPolicy", "args", "ports", "securityContext"):
        assert container[key] == single_container[key], key
    assert container["resources"]["requests"] and container["resources"]["limits"]


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


def test_the_image_installs_the_locked_dependencies_and_every_package() -> None:
    """The image is built from the server's lock, and carries every top-level source folder."""
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "--require-hashes -r requirements/lock-server.txt" in dockerfile
    assert re.search(r"pip install --no-deps --no-build-isolation \.$", dockerfile, re.MULTILINE)
    copied = set(re.findall(r"^COPY (?!--from)(\S+)", dockerfile, re.MULTILINE))
    allowed = {
        line.removeprefix("!").rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.startswith("!")
    }
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    folders = {path.split("/")[0] for path in project["tool"]["setuptools"]["package-dir"].values()}
    for folder in folders:
        assert folder in copied, f"deploy/Dockerfile does not copy {folder}/"
        assert folder in allowed, f".dockerignore leaves out {folder}/"
    assert "requirements/lock-server.txt" in allowed


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
def test_health_command_against_a_real_server(server_process: ServerProcess) -> None:
    for service in ("", "cardarena.v1.MatchService"):
        done = health("--server", server_process.address, "--service", service)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "SERVING" in done.stdout
    unknown = health("--server", server_process.address, "--service", "no.such.Service")
    assert unknown.returncode == 1, unknown.stderr
    port = int(server_process.address.rsplit(":", 1)[1])
    wrong = health("--server", f"127.0.0.1:{port + 1}", "--timeout", "2")
    assert wrong.returncode == 2, wrong.stdout + wrong.stderr
    assert "UNAVAILABLE" in wrong.stderr
    assert server_process.terminate() == 0


def test_health_command_usage_errors_exit_2() -> None:
    assert health("--timeout", "-1").returncode == 2
    assert health("--bogus").returncode == 2
