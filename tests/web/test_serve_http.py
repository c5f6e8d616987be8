"""`pbem serve --http` as the operator starts it: a real process serving mail and pages, a game created by
`pbem game create`, its start letter's link opened over HTTP, an order sent from the page answered by mail,
and SIGINT ending both listeners."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from service.mailclient import letters, text_of

from .site import free_port

PBEM = [sys.executable, "-m", "pbem.cli"]
LINK = re.compile(r"(http://127\.0\.0\.1:\d+/g/g1/p\d+/[0-9a-f]{32}/)")
FORM = re.compile(r'name="form_id" value="([0-9a-f]{32})".*?name="proof" value="([0-9a-f]{32})"', re.S)


def _run(args: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run([*PBEM, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _wait_for(check, seconds: float = 30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("waited in vain")


def test_pbem_serve_http_serves_the_pages_its_letters_link_to(tmp_path):
    http = free_port()
    env = {**os.environ, "PBEM_DATABASE_URL": f"sqlite:///{tmp_path / 'pbem.sqlite'}", "PBEM_MAILDIR": str(tmp_path / "mail"),
           "PBEM_BOARD_PICTURES": "0", "PBEM_GATHER_MINUTES": "0",
           # every command writes letters, so every one must know where the pages are (pbem.toml, for an operator)
           "PBEM_HTTP_LISTEN": f"127.0.0.1:{http}"}
    server = subprocess.Popen([*PBEM, "serve", "--listen", "127.0.0.1:0", "--http", f"127.0.0.1:{http}"], env=env,
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    said: list[str] = []
    threading.Thread(target=lambda: said.extend(server.stderr), daemon=True).start()
    try:
        _wait_for(lambda: any("serving the games' pages" in line for line in said))
        _run(["game", "create", "g1", "--player", "Ann:ann@example.org:Africa", "--player", "Ben:ben@example.org:Italy",
              "--player", "Cy:cy@example.org:Crete", "--seed", "s"], env, tmp_path)
        # the command queued the letters; the running server's outbox loop delivers them
        start = _wait_for(lambda: [m for m in letters(tmp_path / "mail", "ann@example.org") if LINK.search(text_of(m))])
        link = LINK.search(text_of(start[-1])).group(1)
        with urllib.request.urlopen(link, timeout=30) as page:
            body = page.read().decode("utf-8")
            assert page.status == 200 and "Ann (Africa)" in body and page.headers["X-Frame-Options"] == "DENY"
        form_id, proof = FORM.search(body).groups()
        data = urllib.parse.urlencode({"orders": "STATUS", "form_id": form_id, "proof": proof}).encode("ascii")
        before = len(letters(tmp_path / "mail", "ann@example.org"))
        request = urllib.request.Request(link + "orders", data=data, method="POST")
        with urllib.request.urlopen(request, timeout=30) as sent:  # the 303 followed: the page says so
            assert "Your orders were sent" in sent.read().decode("utf-8")
        answered = _wait_for(lambda: [m for m in letters(tmp_path / "mail", "ann@example.org")[before:]
                                      if "STATUS" in text_of(m)])
        assert answered
        try:
            urllib.request.urlopen(link[:-2] + "x/", timeout=30)
            raise AssertionError("a wrong link opened")
        except urllib.error.HTTPError as refused:
            assert refused.code == 404
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    assert server.returncode == 0, "".join(said[-20:])
    assert not any(link.rsplit("/", 2)[-2] in line for line in said), "the log holds a link"
