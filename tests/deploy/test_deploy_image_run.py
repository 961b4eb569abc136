"""The server run exactly as the image runs it: the Dockerfile's entry point with the image's
environment and nothing else, as an unprivileged user, in a data directory that user owns.

Two things differ from a container, both forced by a shared test machine: the port is a free
one instead of 8765 (SOLITAIRE_PORT, which the image also reads), and /opt/solitaire/bin is
this checkout's virtualenv.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from deploy_files import ROOT, image_stages
from support.server_proc import delete_namespace

from server.store.embedded import EmbeddedRedis, free_port

NOBODY = 65534
DOCKER_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
START_TIMEOUT_S = 60.0


@dataclass
class ImageRun:
    process: subprocess.Popen[bytes]
    port: int
    env: dict[str, str]
    data_dir: Path
    log: Path

    def healthz(self) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=5) as r:
                return r.status
        except urllib.error.HTTPError as exc:
            return exc.code

    def run_healthcheck(self) -> subprocess.CompletedProcess[str]:
        """The image's HEALTHCHECK command, verbatim, in the image's environment."""
        _options, argv = image_stages()[-1].healthcheck()
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=30)


def image_environment(port: int, data_dir: Path) -> dict[str, str]:
    """What a process in the container sees: the image's ENV on Docker's default PATH."""
    venv_bin = str(Path(sys.executable).parent)
    env = {"PATH": DOCKER_DEFAULT_PATH, "HOME": str(data_dir), "HOSTNAME": "solitaire-test"}
    for key, value in image_stages()[-1].env().items():
        env[key] = value.replace("$PATH", env["PATH"]).replace("/opt/solitaire/bin", venv_bin)
    assert env["SOLITAIRE_DATA_DIR"] == "/data"
    env["SOLITAIRE_DATA_DIR"] = str(data_dir)
    env["SOLITAIRE_PORT"] = str(port)
    return env


def reachable_by_others(path: Path) -> bool:
    """Whether a user other than the owner may enter every directory above `path`."""
    return all(p.stat().st_mode & stat.S_IXOTH for p in path.resolve().parents)


def as_unprivileged(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv  # already unprivileged
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot drop privileges")
    drop = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    if not reachable_by_others(Path(sys.executable)):
        # This machine's interpreter lives in root's home (the image's is in /usr/local):
        # keep only the right to read and search files, never to write them.
        drop += ["--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    return [*drop, *argv]


def process_uid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError("no Uid line")


def can_make_read_only_root() -> bool:
    """Whether this process may set up a private mount namespace (root, CAP_SYS_ADMIN)."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        return False
    probe = subprocess.run([unshare, "--mount", "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


def checkout_dirs_under_tmp() -> list[str]:
    """The top folders under /tmp that hold this checkout or its interpreter (CI may clone
    into /tmp), which a fresh tmpfs on /tmp would otherwise hide from the server."""
    tops = set()
    for path in (ROOT, Path(sys.prefix), Path(sys.executable)):
        parts = path.resolve().parts
        if len(parts) > 2 and parts[:2] == ("/", "tmp"):
            tops.add(parts[2])
    return sorted(tops)


def read_only_root(argv: list[str], data_dir: Path) -> list[str]:
    """`argv` with the root filesystem read-only and a fresh tmpfs on /tmp, as compose's
    `read_only: true` and `tmpfs: [/tmp]` give a container; only `data_dir` (the volume)
    stays writable. The mounts live in a private mount namespace that ends with the process.
    A checkout under /tmp is bound back into the new tmpfs (read-only), as an image has its
    code outside /tmp."""
    hold = shlex.quote(tempfile.mkdtemp(prefix="solitaire-image-tmp-", dir="/var/tmp"))
    keep = "".join(
        f"mkdir -p /tmp/{shlex.quote(top)}; mount --bind {hold}/{shlex.quote(top)} "
        f"/tmp/{shlex.quote(top)}; "
        for top in checkout_dirs_under_tmp()
    )
    script = (
        "set -e; mount --make-rprivate /; "
        f"mount --bind {shlex.quote(str(data_dir))} {shlex.quote(str(data_dir))}; "
        f"mount --bind /tmp {hold}; "
        "mount -o remount,bind,ro /; mount -t tmpfs -o mode=1777 tmpfs /tmp; "
        f"{keep}"
        'exec "$@"'
    )
    return ["unshare", "--mount", "sh", "-c", script, "sh", *argv]


def start_image(extra_env: dict[str, str], *, read_only: bool = False) -> ImageRun:
    """The image's entry point in the image's environment (plus `extra_env`), unprivileged,
    on a read-only root filesystem if asked."""
    (entry,) = image_stages()[-1].all("ENTRYPOINT")
    # The user's own directory, like the image's /data owned by its user; not under pytest's
    # tmp_path, whose parents only root may enter, nor under /tmp, which a read-only run
    # covers with its own tmpfs.
    data_dir = Path(tempfile.mkdtemp(prefix="solitaire-image-", dir="/var/tmp"))
    if os.geteuid() == 0:
        os.chown(data_dir, NOBODY, NOBODY)
    port = free_port()
    env = {**image_environment(port, data_dir), **extra_env}
    command = entry.exec_form()
    command[0] = shutil.which(command[0], path=env["PATH"]) or command[0]
    command = as_unprivileged(command)
    if read_only:
        command = read_only_root(command, data_dir)
    log = Path(tempfile.mkdtemp(prefix="solitaire-image-log-")) / "stdout"
    with open(log, "wb") as out, open(log.with_name("stderr"), "wb") as err:
        process = subprocess.Popen(
            command,
            env=env,
            cwd=data_dir,  # the image's WORKDIR
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
    return ImageRun(process, port, env, data_dir, log)


def stop_image(run: ImageRun, grace_s: float = 30) -> None:
    if run.process.poll() is None:
        run.process.send_signal(signal.SIGTERM)
        try:
            run.process.wait(grace_s)
        except subprocess.TimeoutExpired:
            run.process.kill()
            run.process.wait()
    shutil.rmtree(run.data_dir, ignore_errors=True)
    shutil.rmtree(run.log.parent, ignore_errors=True)


@pytest.fixture
def image_run() -> Iterator[ImageRun]:
    run = start_image({})
    try:
        yield run
    finally:
        stop_image(run)


def compose_environment(service: str, redis_url: str, host_env: dict[str, str]) -> dict[str, str]:
    """A service's environment as compose gives it: `${VAR:-default}` interpolated from
    `host_env`, variables without a value passed through only when the host sets them, and the
    compose network's `redis` host replaced by the test's Redis."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    env: dict[str, str] = {}
    for key, value in compose["services"][service]["environment"].items():
        if value is None:
            if key in host_env:
                env[key] = host_env[key]
            continue

        def interpolate(m: re.Match[str]) -> str:
            return host_env.get(m.group(1)) or (m.group(2) or "")

        env[key] = re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", interpolate, str(value))
    assert env["REDIS_URL"] == "redis://redis:6379/0"
    env["REDIS_URL"] = redis_url
    return env


def test_server_runs_with_the_compose_environment(redis_url: str, redis_namespace: str) -> None:
    """What `docker compose up` starts: the image, plus the compose file's environment, on a
    read-only root filesystem with a tmpfs /tmp (compose's `read_only` and `tmpfs`)."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    service = compose["services"]["server"]
    read_only = service.get("read_only", False)
    assert service.get("tmpfs") == ["/tmp"] or not read_only
    if read_only and not can_make_read_only_root():
        pytest.skip("cannot make a read-only root here (needs root and mount namespaces)")
    host_env = {"SOLITAIRE_NAMESPACE": redis_namespace}  # keeps the shared Redis tidy
    run = start_image(compose_environment("server", redis_url, host_env), read_only=read_only)
    try:
        wait_healthy(run)
        if read_only:  # really serving from a read-only root, /tmp its own tmpfs
            mounts = {}  # mount point -> (mount options, filesystem type)
            for line in Path(f"/proc/{run.process.pid}/mountinfo").read_text().splitlines():
                fields, _, fs = line.partition(" - ")
                mounts[fields.split()[4]] = (fields.split()[5], fs.split()[0])
            assert mounts["/"][0].split(",")[0] == "ro" and mounts["/tmp"][1] == "tmpfs"
        assert run.run_healthcheck().returncode == 0
        assert run.env["SOLITAIRE_LOG_LEVEL"] == "INFO"
        # With REDIS_URL set the data directory holds nothing: the store is elsewhere.
        assert not any(run.data_dir.iterdir())
        run.process.send_signal(signal.SIGTERM)
        assert run.process.wait(30) == 0
        settings = next(
            json.loads(line)["msg"]
            for line in run.log.read_text().splitlines()
            if "settings" in line
        )
        assert (
            "'redis_url': 'redis://" in settings and f"'namespace': '{redis_namespace}'" in settings
        )
    finally:
        stop_image(run)
        delete_namespace(redis_url, redis_namespace)


def wait_healthy(run: ImageRun) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if run.process.poll() is not None:
            raise AssertionError(
                f"the server exited with {run.process.returncode}:\n"
                + run.log.read_text()
                + run.log.with_name("stderr").read_text()
            )
        try:
            if run.healthz() == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("no 200 from /healthz:\n" + run.log.read_text())


def documented_metrics() -> set[str]:
    """Metric families named in the README's metrics table."""
    text = (ROOT / "deploy" / "README.md").read_text()
    return set(re.findall(r"^\| `(solitaire_\w+)(?:\{\w+\})?` \|", text, re.M))


def test_cluster_mode_without_a_cluster_url_is_refused_clearly(tmp_path: Path) -> None:
    env = {**image_environment(free_port(), tmp_path), "SOLITAIRE_REDIS_CLUSTER": "1"}
    out = subprocess.run(
        [shutil.which("solitaire-server", path=env["PATH"]) or "solitaire-server"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert "REDIS_URL" in out.stdout
    assert not any(tmp_path.iterdir()), "nothing may be started or written"


def test_server_runs_as_the_image_runs_it(image_run: ImageRun) -> None:
    wait_healthy(image_run)
    # Unprivileged, in its own data directory, with the embedded store living there.
    assert process_uid(image_run.process.pid) != 0
    if os.geteuid() == 0:
        # The same user may not write outside its data directory (no leftover privileges).
        target = image_run.log.parent / "x"
        probe = subprocess.run(
            as_unprivileged([sys.executable, "-c", f"open({str(target)!r}, 'w')"]),
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert probe.returncode != 0 and "PermissionError" in probe.stderr, probe.stderr
    # Every metric it exports is explained in deploy/README.md, and nothing else is.
    with urllib.request.urlopen(f"http://127.0.0.1:{image_run.port}/metrics", timeout=5) as r:
        exported = set(re.findall(r"^# TYPE (solitaire_\w+) ", r.read().decode(), re.M))
    # (`*_created` families are prometheus_client's creation timestamps, documented as a group.)
    assert {m for m in exported if not m.endswith("_created")} == documented_metrics()
    # The image's HEALTHCHECK, run as Docker would, agrees with /healthz.
    check = image_run.run_healthcheck()
    assert check.returncode == 0, check.stderr
    # SIGTERM (`docker stop`) ends it cleanly and promptly.
    image_run.process.send_signal(signal.SIGTERM)
    assert image_run.process.wait(30) == 0
    # Logs go to stdout as one JSON object per line (SOLITAIRE_LOG_FORMAT=json).
    lines = [ln for ln in image_run.log.read_text().splitlines() if ln.strip()]
    assert lines, "nothing logged on stdout"
    records = [json.loads(ln) for ln in lines]
    assert all(isinstance(r, dict) for r in records)
    # Once the server is gone, the HEALTHCHECK fails, so Docker would notice.
    assert image_run.run_healthcheck().returncode != 0


def test_image_healthcheck_fails_when_the_store_is_gone(tmp_path: Path) -> None:
    """/healthz answers 503 once Redis is unreachable, and the image's HEALTHCHECK then fails,
    so Docker marks the container unhealthy (and the balancer stops sending it players)."""
    store = EmbeddedRedis(data_dir=tmp_path / "store")
    store.start()
    run = start_image({"REDIS_URL": store.url})
    try:
        wait_healthy(run)
        assert run.run_healthcheck().returncode == 0
        store.stop()
        deadline = time.monotonic() + 30
        while run.healthz() != 503:
            assert time.monotonic() < deadline, "/healthz never reported the store gone"
            time.sleep(0.2)
        check = run.run_healthcheck()
        assert check.returncode != 0 and "503" in check.stderr
    finally:
        # How the server stops without its store is not this test's subject: Docker would
        # SIGKILL it after the grace period, and so does this test, after a shorter one.
        stop_image(run, grace_s=5)
        store.stop()
