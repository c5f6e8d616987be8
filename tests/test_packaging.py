"""The wheel carries migrations/ and templates/: installed into a fresh venv, `pbem` runs from any directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, cwd: Path, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(list(args), cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done


def test_the_wheel_installs_into_a_fresh_venv_and_plays_a_setup_step_from_another_directory(tmp_path):
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT),
        cwd=tmp_path)
    (wheel,) = dist.glob("pbem-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in ("pbem/_shipped/alembic.ini", "pbem/_shipped/migrations/env.py",
                    "pbem/_shipped/migrations/versions/0001_initial.py", "pbem/_shipped/templates/prompt.txt",
                    "pbem/rules/ruleset/data/advciv/areas.csv"):
        assert shipped in names, shipped

    # A fresh venv with the wheel alone; its dependencies come from this test run's own site-packages,
    # added after the venv's own (a .pth line), so no network is needed and our pbem is the wheel's.
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel), cwd=tmp_path)
    site = Path(run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path).stdout.strip())
    (site / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    env.update(PBEM_MAILDIR=str(elsewhere / "mail"))
    where = run(str(python), "-c", "import pbem; print(pbem.__file__)", cwd=elsewhere, env=env).stdout
    assert where.startswith(str(target)), where
    db = f"sqlite:///{elsewhere / 'game.sqlite'}"
    pbem = str(target / "bin" / "pbem")
    created = run(pbem, "--db", db, "game", "create", "g1", "--player", "Ann:ann@example.org",
                  "--player", "Ben:ben@example.net", "--player", "Cy:cy@example.com", "--seed", "wheel", cwd=elsewhere, env=env)
    assert "g1" in created.stdout
    state = run(pbem, "--db", db, "state", "g1", "--json", cwd=elsewhere, env=env).stdout
    first = json.loads(state)
    asked = next(iter(first["pending"].values()))
    receipt = run(pbem, "--db", db, "submit", "g1", "--as", asked["player"], cwd=elsewhere, env=env,
                  stdin="NATION Crete\nPLACE Knossos\n").stdout
    assert "accepted: NATION Crete" in receipt and "accepted: PLACE Knossos" in receipt, receipt
    run(pbem, "--db", db, "flush", cwd=elsewhere, env=env)
    mail = list((elsewhere / "mail").rglob("*"))
    assert any(p.is_file() for p in mail), "the start letters were rendered from the wheel's templates"
