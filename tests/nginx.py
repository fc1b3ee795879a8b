"""nginx (Debian's package) with the configuration of docs/guide/15-deployment.md, as a
process of its own: its prefix, pid, temporary folders and logs in one folder, on loopback
ports, never the system's service. What `benchmarks/deployment.py` and
`tests/ragplatform/test_deployment.py` start in front of daphne processes.

The configuration is the guide's fenced nginx block as written, with only the values the guide
names as the reader's own replaced (PLACEHOLDERS), so the guide and what runs cannot drift
apart: a placeholder the block no longer contains is an error, not a silent skip.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
import pwd
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide" / "15-deployment.md"
NGINX = "/usr/sbin/nginx"
# nginx drops root by itself only to a user it is told; run as root here, it runs as this one.
UNPRIVILEGED = "nobody"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)


class GuideDrift(AssertionError):
    """The guide's nginx block is not what the check knows how to run."""


@dataclass(frozen=True)
class Site:
    """The reader's own values for the guide's placeholders."""

    https_port: int
    http_port: int
    upstreams: tuple[int, int]
    certificate: Path
    certificate_key: Path
    static_root: Path
    host: str = "127.0.0.1"

    def placeholders(self) -> dict[str, str]:
        """Each placeholder as the guide writes it -> what it becomes here (in this order:
        the certificate paths contain the site's name)."""
        first, second = self.upstreams
        return {
            "server 127.0.0.1:8001;": f"server 127.0.0.1:{first};",
            "server 127.0.0.1:8002;": f"server 127.0.0.1:{second};",
            "listen 443 ssl;": f"listen {self.host}:{self.https_port} ssl;",
            "listen 80;": f"listen {self.host}:{self.http_port};",
            "/etc/ssl/answers.example.org.pem": str(self.certificate),
            "/etc/ssl/answers.example.org.key": str(self.certificate_key),
            "answers.example.org": self.host,
            "/srv/ragplatform/static/": f"{self.static_root}/",
        }


def guide_nginx_block(text: str) -> str:
    """The one fenced block of the guide that is an nginx configuration."""
    blocks = [b for b in FENCE.findall(text) if re.search(r"^upstream \w+ \{", b, re.MULTILINE)]
    if len(blocks) != 1:
        raise GuideDrift(f"the guide has {len(blocks)} nginx blocks (an `upstream`), not one")
    return str(blocks[0])


def guide_config(site: Site, guide: Path = GUIDE) -> str:
    """The guide's nginx block with the site's values in place of its placeholders."""
    config = guide_nginx_block(guide.read_text(encoding="utf-8"))
    for placeholder, value in site.placeholders().items():
        if placeholder not in config:
            raise GuideDrift(f"the guide's nginx block no longer contains {placeholder!r}")
        config = config.replace(placeholder, value)
    return config


def certificate_make(folder: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """A self-signed certificate for `host` (an address), valid for a day: (cert, key)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "site.pem", folder / "site.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def main_config(folder: Path) -> str:
    """Debian's http context, reduced to what a process of its own needs: the guide's block
    goes where Debian's sites-enabled/ would be included."""
    return f"""pid {folder}/nginx.pid;
error_log {folder}/error.log info;
worker_processes auto;
events {{
    worker_connections 768;
}}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log {folder}/access.log;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    include {folder}/ragplatform.conf;
}}
"""


@dataclass
class Nginx:
    """nginx with the guide's configuration for `site`, everything of it under `folder`."""

    folder: Path
    site: Site
    process: subprocess.Popen[bytes] | None = None
    tls: ssl.SSLContext = field(init=False)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "ragplatform.conf").write_text(guide_config(self.site))
        (self.folder / "nginx.conf").write_text(main_config(self.folder))
        self.tls = ssl.create_default_context(cafile=str(self.site.certificate))
        if os.geteuid() == 0:
            _owned_by(self.folder, UNPRIVILEGED)

    @property
    def log(self) -> Path:
        return self.folder / "error.log"

    def command(self, *extra: str) -> list[str]:
        conf = str(self.folder / "nginx.conf")
        return [NGINX, "-p", str(self.folder), "-e", str(self.log), "-c", conf, *extra]

    def config_test(self) -> str:
        """`nginx -t`: its report; raises when nginx rejects the configuration."""
        done = subprocess.run(
            self.command("-t"), capture_output=True, text=True, check=False, user=_user()
        )
        if done.returncode != 0:
            raise GuideDrift(f"nginx -t rejected the guide's configuration:\n{done.stderr}")
        return done.stderr

    def start(self, timeout_s: float = 20) -> Nginx:
        self.process = subprocess.Popen(
            self.command("-g", "daemon off;"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            user=_user(),
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.log.read_text()[-2000:]}")
            if _listening(self.site.https_port) and _listening(self.site.http_port):
                return self
            time.sleep(0.05)
        raise TimeoutError(f"nginx did not listen on {self.site.https_port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # graceful: workers finish, then exit
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def proxy(self) -> Proxy:
        return Proxy(port=self.site.https_port, tls=self.tls, host=self.site.host)


@dataclass(frozen=True)
class Proxy:
    """The site as its users reach it: HTTPS through nginx (a `tests.processes.Endpoint`)."""

    port: int
    tls: ssl.SSLContext
    host: str = "127.0.0.1"
    forwarded: dict[str, str] = field(default_factory=dict)

    @property
    def http(self) -> str:
        return f"https://{self.host}:{self.port}"

    @property
    def origin(self) -> str:
        return self.http


def _user() -> str | None:
    return UNPRIVILEGED if os.geteuid() == 0 else None


def _owned_by(folder: Path, user: str) -> None:
    """nginx's own folder writable by its user (its pid, logs and temporary files)."""
    entry = pwd.getpwnam(user)
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def nginx_available() -> bool:
    return shutil.which(NGINX) is not None
