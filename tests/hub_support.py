"""A real JupyterHub on 127.0.0.1 for the classroom test, and a user's way into it.

:class:`Hub` writes a ``jupyterhub_config.py`` into a temporary folder (free ports
only, the dummy authenticator with one shared password, the simple local spawner
with a home folder per user under that folder) and runs ``jupyterhub`` with
``configurable-http-proxy`` in front.  :class:`HubUser` is what a person does
through the proxy with plain HTTP: log in on the hub's form, ask the hub's REST API
for a token and for their server, then use the server's own REST API (contents)
and run code in a kernel over its websocket.  Every wait has a deadline; ``stop``
ends the servers, the proxy and the hub, whatever state they are in.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

try:
    import psutil
except ImportError:         # only used to find processes left behind on stop
    psutil = None

PASSWORD = "class-of-autograd"


def missing_components() -> str | None:
    """Why a hub cannot run here (None: it can)."""
    for module in ("jupyterhub", "requests", "websocket"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (pip install -e '.[test]')"
    if not shutil.which("configurable-http-proxy"):
        return "configurable-http-proxy is not installed (npm install -g configurable-http-proxy)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HubError(AssertionError):
    pass


def _wait(what: str, deadline: float, probe, every: float = 0.25):
    """Call ``probe`` until it returns something true; fail at ``deadline``."""
    last = None
    while True:
        try:
            got = probe()
            if got:
                return got
        except Exception as err:   # connection refused while starting, ...
            last = err
        if time.monotonic() > deadline:
            raise HubError(f"timed out waiting for {what}" + (f" (last error: {last!r})" if last else ""))
        time.sleep(every)


class Hub:
    def __init__(self, root: Path, users: list[str]):
        self.root = Path(root)
        self.users = users
        self.homes = self.root / "home"
        self.port, self.hub_port, self.api_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.root / "jupyterhub.log"
        self.process: subprocess.Popen | None = None
        self._seen: dict[int, object] = {}

    def home(self, user: str) -> Path:
        return self.homes / user

    def config(self) -> str:
        bindir = str(Path(sys.executable).parent)
        return textwrap.dedent(f"""\
            c = get_config()  # noqa: F821
            c.JupyterHub.bind_url = "{self.url}"
            c.JupyterHub.hub_ip = "127.0.0.1"
            c.JupyterHub.hub_port = {self.hub_port}
            c.JupyterHub.db_url = "sqlite:///{self.root / 'jupyterhub.sqlite'}"
            c.JupyterHub.cookie_secret_file = "{self.root / 'jupyterhub_cookie_secret'}"
            c.JupyterHub.cleanup_servers = True
            c.JupyterHub.cleanup_proxy = True
            c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{self.api_port}"
            c.ConfigurableHTTPProxy.command = [{shutil.which('configurable-http-proxy')!r}]
            c.ConfigurableHTTPProxy.pid_file = "{self.root / 'proxy.pid'}"
            c.JupyterHub.authenticator_class = "jupyterhub.auth.DummyAuthenticator"
            c.DummyAuthenticator.password = {PASSWORD!r}
            c.Authenticator.allowed_users = {set(self.users)!r}
            c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
            c.SimpleLocalProcessSpawner.home_dir_template = "{self.homes}/{{username}}"
            c.Spawner.ip = "127.0.0.1"
            c.Spawner.cmd = [{sys.executable!r}, "-m", "jupyterhub.singleuser"]
            c.Spawner.environment = {{"PATH": {bindir!r} + ":" + {os.environ.get('PATH', '')!r}}}
            c.Spawner.start_timeout = 120
            c.Spawner.http_timeout = 120
            c.Spawner.default_url = "/lab"
            c.Spawner.args = {["--allow-root"] if os.geteuid() == 0 else []!r}
            # answer a start request at once: the servers of the class start side by side
            c.JupyterHub.tornado_settings = {{"slow_spawn_timeout": 0}}
            """)

    def start(self, timeout: float = 90) -> None:
        self.homes.mkdir(parents=True, exist_ok=True)
        (self.root / "jupyterhub_config.py").write_text(self.config())
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("JUPYTER", "JPY_", "CONFIGPROXY"))}
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(self.root / "jupyterhub_config.py")],
            cwd=self.root, env=env, stdout=self._log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
        import requests

        def up():
            if self.process.poll() is not None:
                raise HubError(f"jupyterhub exited with {self.process.returncode}:\n{self.log_tail()}")
            return requests.get(self.url + "/hub/api/", timeout=5).ok
        try:
            _wait("the hub to answer", time.monotonic() + timeout, self._remember(up))
        except HubError as err:
            raise HubError(f"{err}\n{self.log_tail()}") from None

    def _remember(self, probe):
        """Note the hub's child processes (proxy, servers) while waiting, to end them on stop."""
        def wrapped():
            self.note_children()
            return probe()
        return wrapped

    def note_children(self) -> None:
        if psutil is None or self.process is None:
            return
        try:
            for child in psutil.Process(self.process.pid).children(recursive=True):
                self._seen.setdefault(child.pid, child)
        except psutil.Error:
            pass

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no hub log)"
        text = [line for line in text if " 200 GET " not in line]      # the polling
        return "--- hub log (tail) ---\n" + "\n".join(text[-lines:])

    def stop(self, timeout: float = 30) -> None:
        """Stop the hub (which stops the servers and the proxy), then end whatever is left."""
        if self.process is None:
            return
        self.note_children()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(10)
        for proc in self._seen.values():     # servers and kernels: process groups of their own
            try:
                for p in [*proc.children(recursive=True), proc]:
                    p.kill()
            except psutil.Error:
                pass
        self._log.close()
        self.process = None


class HubUser:
    """One person of the class, through the proxy like a browser."""

    def __init__(self, hub: Hub, name: str):
        import requests
        self.hub, self.name = hub, name
        self.http = requests.Session()
        self.token: str | None = None
        self.server = f"{hub.url}/user/{name}"

    def _check(self, response, what):
        if not response.ok:
            raise HubError(f"{self.name}: {what}: HTTP {response.status_code} {response.text[:500]}"
                           f"\n{self.hub.log_tail()}")
        return response

    def log_in(self) -> None:
        """The hub's login form with the class password, then a token from the REST API."""
        page = self._check(self.http.get(self.hub.url + "/hub/login", timeout=30), "login page")
        xsrf = self.http.cookies.get("_xsrf", "")
        form = {"username": self.name, "password": PASSWORD, "_xsrf": xsrf}
        done = self._check(self.http.post(self.hub.url + "/hub/login?next=", data=form,
                                          allow_redirects=False, timeout=30), "log in")
        assert done.status_code == 302 and "jupyterhub-hub-login" in self.http.cookies, page.url
        self.http.get(self.hub.url + "/hub/token", timeout=30)       # a fresh _xsrf once logged in
        made = self._check(self.http.post(
            f"{self.hub.url}/hub/api/users/{self.name}/tokens",
            json={"note": "classroom test", "expires_in": 3600},
            headers={"X-XSRFToken": self.http.cookies.get("_xsrf", "")}, timeout=30), "new token")
        self.token = made.json()["token"]
        self.http = type(self.http)()          # from now on: the token only, as a script would
        self.http.headers["Authorization"] = f"token {self.token}"

    def start_server(self) -> None:
        response = self.http.post(f"{self.hub.url}/hub/api/users/{self.name}/server", timeout=30)
        if response.status_code not in (201, 202):
            self._check(response, "start server")
            raise HubError(f"{self.name}: start server: HTTP {response.status_code}")

    def wait_ready(self, timeout: float = 150) -> None:
        def ready():
            self.hub.note_children()
            model = self._check(self.http.get(f"{self.hub.url}/hub/api/users/{self.name}",
                                              timeout=30), "user model").json()
            server = model.get("servers", {}).get("", {})
            return server.get("ready") and self.http.get(self.server + "/api/status", timeout=30).ok
        try:
            _wait(f"{self.name}'s server", time.monotonic() + timeout, ready, every=0.5)
        except HubError as err:
            raise HubError(f"{err}\n{self.hub.log_tail()}") from None

    # --- the single-user server's REST API, through the proxy ---------------------------

    def get_notebook(self, path: str) -> dict:
        r = self._check(self.http.get(f"{self.server}/api/contents/{path}",
                                      params={"content": "1"}, timeout=30), f"open {path}")
        return r.json()["content"]

    def save_notebook(self, path: str, nb: dict) -> None:
        self._check(self.http.put(f"{self.server}/api/contents/{path}", timeout=30,
                                  json={"type": "notebook", "format": "json", "content": nb}),
                    f"save {path}")

    def listdir(self, path: str) -> list[str]:
        r = self._check(self.http.get(f"{self.server}/api/contents/{path}", timeout=30),
                        f"list {path}")
        return [item["name"] for item in r.json()["content"]]

    def start_kernel(self) -> "Kernel":
        r = self._check(self.http.post(f"{self.server}/api/kernels", json={"name": "python3"},
                                       timeout=60), "start kernel")
        return Kernel(self, r.json()["id"])


class Kernel:
    """A kernel of the user's server, driven over the server's websocket (through the proxy)."""

    def __init__(self, user: HubUser, kernel_id: str):
        self.user, self.id = user, kernel_id
        self.url = user.server.replace("http://", "ws://", 1) + f"/api/kernels/{kernel_id}/channels"
        self.client_id = uuid.uuid4().hex

    def execute(self, code: str, timeout: float = 300) -> str:
        """Run ``code``; its stdout and stderr, or HubError with the traceback.  A websocket
        of its own each time, as a browser tab that is opened for a while: the server
        drops a socket whose client has not answered its pings (every 30 s)."""
        import websocket
        ws = websocket.create_connection(
            self.url, header=[f"Authorization: token {self.user.token}"], timeout=60)
        try:
            return self._execute(ws, code, timeout)
        finally:
            ws.close()

    def _execute(self, ws, code: str, timeout: float) -> str:
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": self.user.name,
                       "session": self.client_id, "date": "", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": False,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
        deadline = time.monotonic() + timeout
        out, error, idle, replied = [], None, False, False
        while not (idle and replied):
            left = deadline - time.monotonic()
            if left <= 0:
                raise HubError(f"{self.user.name}: code ran past {timeout}s:\n{code}\n{''.join(out)}")
            ws.settimeout(left)
            frame = ws.recv()
            if not frame:
                raise HubError(f"{self.user.name}: the kernel's websocket closed:\n{''.join(out)}")
            msg = json.loads(frame)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["header"]["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind == "error":
                error = f"{content['ename']}: {content['evalue']}"
            elif kind == "status" and content["execution_state"] == "idle":
                idle = True
            elif kind == "execute_reply":
                replied = True
        if error:
            raise HubError(f"{self.user.name}: {error}\n{''.join(out)}")
        return "".join(out)

    def shell(self, *args: str, cwd: str = ".", timeout: float = 300) -> str:
        """Run a command in the user's server as a terminal would, from ``cwd`` (relative
        to the user's home); fail with its output if it fails."""
        code = textwrap.dedent(f"""\
            import os, subprocess
            _r = subprocess.run({list(args)!r}, cwd=os.path.expanduser({('~/' + cwd)!r}),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                timeout={timeout - 10!r})
            print(_r.stdout)
            print("exit status", _r.returncode)
            """)
        out = self.execute(code, timeout)
        if not out.rstrip().endswith("exit status 0"):
            raise HubError(f"{self.user.name}: {' '.join(args)} failed:\n{out}")
        return out
