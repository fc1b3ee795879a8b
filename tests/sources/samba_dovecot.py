"""Samba's smbd (an SMB share) and Dovecot (an IMAP mailbox), each started with a config of its
own in a temp dir, on a free loopback port: no system service, no system config is touched.
A missing binary fails with the Debian package to install (scripts/system-deps.sh)."""

from __future__ import annotations

import getpass
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.processes import free_port
from tests.sources.servers import Running, _start, binary

SMB_SHARE, SMB_PASSWORD = "docs", "smb-secret"
SMB_USER = getpass.getuser()  # smbd maps a share user onto a Unix account: this process's
IMAP_USER, IMAP_PASSWORD = "mia", "imap-secret"


def samba_start(root: Path) -> Running:
    smbd = binary("smbd", "the Debian package samba")
    smbpasswd = binary("smbpasswd", "the Debian package samba")
    for name in ("share", "private", "lock", "state", "cache", "pid", "ncalrpc"):
        (root / name).mkdir()
    port = free_port()
    config = root / "smb.conf"
    config.write_text(_smb_conf(root, port))
    subprocess.run(
        [smbpasswd, "-c", str(config), "-a", "-s", SMB_USER],
        input=f"{SMB_PASSWORD}\n{SMB_PASSWORD}\n".encode(),
        check=True,
        capture_output=True,
    )
    command = [smbd, "--foreground", "--no-process-group", "--debug-stdout", "-s", str(config)]
    return _start(command, port=port, root=root, own_group=True)


def _smb_conf(root: Path, port: int) -> str:
    folders = {
        "private dir": "private",
        "lock directory": "lock",
        "state directory": "state",
        "cache directory": "cache",
        "pid directory": "pid",
        "ncalrpc dir": "ncalrpc",
    }
    lines = ["[global]", f"smb ports = {port}", "interfaces = 127.0.0.1"]
    lines += [f"{name} = {root / folder}" for name, folder in folders.items()]
    lines += [
        "bind interfaces only = yes",
        f"passdb backend = tdbsam:{root / 'private' / 'passdb.tdb'}",
        f"log file = {root / 'smbd.log'}",
        "server role = standalone server",
        "map to guest = never",
        "disable netbios = yes",
        "server min protocol = SMB2_10",
        "load printers = no",
        "printing = bsd",
        "printcap name = /dev/null",
        "disable spoolss = yes",
        f"[{SMB_SHARE}]",
        f"path = {root / 'share'}",
        "read only = yes",
    ]
    return "\n".join(lines) + "\n"


class Dovecot(Running):
    mail_home: Path

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.mail_home, ignore_errors=True)


def dovecot_start(root: Path) -> Dovecot:
    dovecot = binary("dovecot", "the Debian package dovecot-imapd")
    port = free_port()
    (root / "run").mkdir()
    (root / "state").mkdir()
    # Dovecot reads its users as `dovecot` and refuses mail as root: run as root, its users
    # and mail live in a folder of their own under the system's temp dir (pytest's temp dirs
    # are closed to other users), the mail stored as `nobody`.
    shared = Path(tempfile.mkdtemp(prefix="dovecot-"))
    shared.chmod(0o755)
    (shared / "users").write_text(f"{IMAP_USER}:{{PLAIN}}{IMAP_PASSWORD}::::::\n")
    (shared / "mail").mkdir()
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        nobody = pwd.getpwnam("nobody")
        uid, gid = nobody.pw_uid, nobody.pw_gid
        os.chown(shared / "mail", uid, gid)
    config = root / "dovecot.conf"
    config.write_text(_dovecot_conf(root, port, shared, uid, gid))
    running = _start([dovecot, "-F", "-c", str(config)], port=port, root=root)
    found = Dovecot(running.process, running.port, running.root)
    found.mail_home = shared
    return found


def _dovecot_conf(root: Path, port: int, shared: Path, uid: int, gid: int) -> str:
    users = "" if os.getuid() == 0 else f"default_internal_user = {getpass.getuser()}\n"
    users += "" if os.getuid() == 0 else f"default_login_user = {getpass.getuser()}\n"
    return f"""protocols = imap
listen = 127.0.0.1
base_dir = {root / "run"}
state_dir = {root / "state"}
log_path = {root / "dovecot.log"}
{users}ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:{shared}/mail/%u/Maildir
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {shared / "users"}
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={shared}/mail/%u
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service stats {{
  inet_listener http {{
    port = 0
  }}
}}
"""
