"""Provisioning files: shellcheck clean, install --dry-run works, cloud-init parses, Dockerfile is consistent."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PROV = REPO / "vm" / "provision"
SCRIPT = PROV / "install-guest.sh"


def test_shellcheck_is_clean():
    assert shutil.which("shellcheck"), "shellcheck is missing: apt-get install shellcheck"
    r = subprocess.run(["shellcheck", "-x", str(SCRIPT)], check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_install_dry_run_prints_every_step_and_changes_nothing(tmp_path):
    r = subprocess.run([str(SCRIPT), "--dry-run", "--user", "guesttest", "--mode", "sandbox", "--app", "mousepad",
                        "--port", "9876", "--root", str(tmp_path / "files"), "--prefix", str(tmp_path / "opt")],
                       check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for step in ("apt-get install", "python3 -m venv", "pip install", "systemctl enable --now cua-guest.service"):
        assert step in out, step
    exec_line = next(line for line in out.splitlines() if "ExecStart=" in line)
    assert "--host 127.0.0.1 --port 9876 --env sandbox:mousepad" in exec_line
    assert "--allow-exec" not in exec_line and "@" not in exec_line
    assert not (tmp_path / "opt").exists() and not (tmp_path / "files").exists()


@pytest.mark.parametrize("args,fragment", [(["--port", "70000"], "--port"), (["--mode", "vnc"], "--mode"),
                                           (["--user", "a b"], "--user"), (["--app", "x;rm"], "--app"),
                                           (["--bogus"], "unknown option")])
def test_install_rejects_bad_options(args, fragment):
    r = subprocess.run([str(SCRIPT), "--dry-run", *args], check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and fragment in r.stderr


def test_cloud_init_user_data_parses_and_serves_on_loopback():
    text = (PROV / "user-data.yaml").read_text()
    assert text.startswith("#cloud-config\n")
    data = yaml.safe_load(text)
    assert {"packages", "write_files", "runcmd"} <= set(data)
    unit = next(f["content"] for f in data["write_files"] if f["path"].endswith("cua-guest.service"))
    assert "--host 127.0.0.1" in unit and "--allow-exec" not in unit
    assert any("enable" in cmd for cmd in data["runcmd"])


def test_dockerfile_copies_files_that_exist():
    lines = (PROV / "Dockerfile").read_text().replace("\\\n", " ").splitlines()
    copies = [line.split()[1:-1] for line in lines if line.startswith("COPY ")]
    assert copies
    for srcs in copies:
        for src in srcs:
            assert (REPO / src).exists(), f"Dockerfile copies {src}, which is not in the repository"
    entry = next(line for line in lines if line.startswith("ENTRYPOINT"))
    assert "serve" in entry and "--allow-exec" not in entry
    health = next(line for line in lines if line.startswith("HEALTHCHECK"))
    module = re.search(r'"-m", "([\w.]+)"', health).group(1)
    assert (REPO / (module.replace(".", "/") + ".py")).exists()


def test_systemd_unit_template_has_every_placeholder_filled_by_the_script():
    unit = (PROV / "cua-guest.service").read_text()
    script = SCRIPT.read_text()
    for ph in set(re.findall(r"@[A-Z]+@", unit)):
        assert f"s|{ph}|" in script, ph


def test_provision_readme_covers_qemu_cloud_and_docker():
    text = (PROV / "README.md").read_text().lower()
    for word in ("qemu", "cloud", "docker", "ssh -n -l", "cua_token"):
        assert word in text, word
