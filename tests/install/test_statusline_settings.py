"""`xshare statusline install | remove` never loses the user's settings (issue 9, "The user's settings").

Each case writes a settings.json the way a user or a dotfile manager leaves it (own formatting, own
mode, a symlink, read-only, a lost install record) and checks what is on disk afterwards, byte for byte.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from xshare.cli import main
from xshare.install import settings_file, statusline_setup

REPO = Path(__file__).resolve().parents[2]
THEIRS = '{\n\t\t"type": "command",\n\t\t"command": "~/bin/my-line.sh",   "padding": 1\n\t}'
# tabs, a key order of their own, odd spacing, a unicode value and no newline at the end
THEIR_FILE = ('{\n\t"model": "opus",\n\t"statusLine": ' + THEIRS + ',\n\t"env": {"GREETING": "grüß dich"},\n'
              '\t"permissions": {"allow": ["Bash(ls:*)"]}\n}')


def settings_at(home: Path, text: str | None = THEIR_FILE, mode: int = 0o644) -> Path:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    if text is not None:
        path.write_bytes(text.encode("utf-8"))
        path.chmod(mode)
    return path


def record_path() -> Path:
    return statusline_setup._record_path()


def ours(path: Path) -> bool:
    return statusline_setup.is_ours(json.loads(path.read_text()).get("statusLine"))


def test_install_install_remove_gives_back_the_same_bytes_mode_and_first_backup(capsys, isolated_home: Path):
    path = settings_at(isolated_home, mode=0o640)
    assert main(["statusline", "install", "--force"]) == 0
    assert ours(path) and stat.S_IMODE(path.stat().st_mode) == 0o640
    backup = path.with_name("settings.json.xshare-backup")
    assert backup.read_text() == THEIR_FILE and stat.S_IMODE(backup.stat().st_mode) == 0o640
    # the edit touched the statusLine value only: the rest keeps its tabs and bytes
    text = path.read_text()
    assert text.startswith('{\n\t"model": "opus",\n\t"statusLine": {\n\t\t"type": "command",')
    assert text.endswith(',\n\t"env": {"GREETING": "grüß dich"},\n\t"permissions": {"allow": ["Bash(ls:*)"]}\n}')
    assert main(["statusline", "install", "--force", "--format", "{context}"]) == 0
    assert backup.read_text() == THEIR_FILE  # the second install did not overwrite the first backup
    assert main(["statusline", "remove"]) == 0
    assert "the previous status line is back" in capsys.readouterr().out
    assert path.read_bytes() == THEIR_FILE.encode("utf-8")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert not record_path().exists()


def test_remove_after_the_user_edited_other_keys_restores_only_the_status_line(isolated_home: Path):
    path = settings_at(isolated_home)
    assert main(["statusline", "install", "--force"]) == 0
    edited = path.read_text().replace('"model": "opus"', '"model": "sonnet"')  # the user changes the model
    path.write_text(edited)
    assert main(["statusline", "remove"]) == 0
    assert path.read_text() == THEIR_FILE.replace('"model": "opus"', '"model": "sonnet"')


def test_a_file_without_a_status_line_gets_the_key_added_then_removed(isolated_home: Path):
    original = '{\n    "model": "opus",\n    "theme": "dark"\n}\n'
    path = settings_at(isolated_home, original)
    assert main(["statusline", "install"]) == 0
    assert path.read_text().startswith('{\n    "model": "opus",\n    "theme": "dark",\n    "statusLine": {\n        "')
    path.write_text(path.read_text().replace('"dark"', '"light"'))
    assert main(["statusline", "remove"]) == 0
    assert path.read_text() == original.replace('"dark"', '"light"')


def test_a_fresh_home_install_then_remove_leaves_no_file(isolated_home: Path):
    path = isolated_home / ".claude" / "settings.json"
    assert main(["statusline", "install"]) == 0
    assert ours(path) and not path.with_name("settings.json.xshare-backup").exists()
    assert main(["statusline", "remove"]) == 0
    assert not path.exists()


def test_a_symlinked_settings_file_is_edited_through_the_link(isolated_home: Path):
    dotfiles = isolated_home / "dotfiles" / "claude"
    dotfiles.mkdir(parents=True)
    target = dotfiles / "settings.json"
    target.write_text(THEIR_FILE)
    target.chmod(0o600)
    link = isolated_home / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(target)
    assert main(["statusline", "install", "--force"]) == 0
    assert link.is_symlink() and link.resolve() == target
    assert ours(target) and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.with_name("settings.json.xshare-backup").read_text() == THEIR_FILE
    assert not link.with_name("settings.json.xshare-backup").exists()
    assert main(["statusline", "remove"]) == 0
    assert link.is_symlink() and target.read_text() == THEIR_FILE


def test_a_dangling_symlink_is_refused(capsys, isolated_home: Path):
    link = isolated_home / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(isolated_home / "dotfiles" / "gone.json")
    assert main(["statusline", "install"]) == 1
    assert "symlink" in capsys.readouterr().err
    assert link.is_symlink() and not (isolated_home / "dotfiles").exists()


def test_a_read_only_settings_file_is_refused_and_left_alone(capsys, isolated_home: Path):
    # judged by its permission bits: root (as in CI) may write it, but read-only is the user's wish
    path = settings_at(isolated_home, '{"model": "opus"}', mode=0o444)
    assert main(["statusline", "install"]) == 1
    err = capsys.readouterr().err
    assert "read-only" in err and "Traceback" not in err
    assert path.read_text() == '{"model": "opus"}' and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert not record_path().exists() and not path.with_name("settings.json.xshare-backup").exists()


def test_a_read_only_folder_is_refused_without_a_traceback(isolated_home: Path):
    path = settings_at(isolated_home, '{"model": "opus"}')
    path.parent.chmod(0o555)
    try:
        done = subprocess.run([sys.executable, "-m", "xshare", "statusline", "install"], capture_output=True,
                              text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode == 1 and "read-only" in done.stderr and "Traceback" not in done.stderr
        assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]
    finally:
        path.parent.chmod(0o755)
    assert path.read_text() == '{"model": "opus"}' and not record_path().exists()


def test_remove_refuses_a_settings_file_made_read_only_since_install(capsys, isolated_home: Path):
    path = settings_at(isolated_home)
    assert main(["statusline", "install", "--force"]) == 0
    installed = path.read_bytes()
    path.chmod(0o444)
    assert main(["statusline", "remove"]) == 1
    assert "read-only" in capsys.readouterr().err
    assert path.read_bytes() == installed and record_path().exists()  # nothing lost: remove can run again
    path.chmod(0o644)
    assert main(["statusline", "remove"]) == 0 and path.read_text() == THEIR_FILE


def test_a_lost_install_record_makes_remove_tell_the_truth(capsys, isolated_home: Path):
    path = settings_at(isolated_home)
    assert main(["statusline", "install", "--force"]) == 0
    record_path().unlink()  # e.g. the state folder was cleaned
    assert main(["statusline", "install"]) == 0
    capsys.readouterr()
    assert main(["statusline", "remove"]) == 0
    out = capsys.readouterr().out
    assert "previous status line is back" not in out and "no previous status line was recorded" in out
    assert "settings.json.xshare-backup" in out  # where their line still is
    settings = json.loads(path.read_text())
    assert "statusLine" not in settings and settings["model"] == "opus"
    assert json.loads(path.with_name("settings.json.xshare-backup").read_text())["statusLine"]["padding"] == 1


def test_a_version_1_record_holding_xshares_own_line_is_not_put_back(capsys, isolated_home: Path):
    path = settings_at(isolated_home, '{"model": "opus"}')
    assert main(["statusline", "install"]) == 0
    mine = json.loads(path.read_text())["statusLine"]
    record_path().write_text(json.dumps({"settings": str(path), "previous": mine}))  # what 0.x wrote
    path.write_text(path.read_text().replace("opus", "sonnet"))
    assert main(["statusline", "remove"]) == 0
    assert "no previous status line was recorded" in capsys.readouterr().out
    assert json.loads(path.read_text()) == {"model": "sonnet"}


def test_an_unwritable_state_folder_leaves_settings_untouched(capsys, isolated_home: Path,
                                                              monkeypatch: pytest.MonkeyPatch):
    path = settings_at(isolated_home)
    blocker = isolated_home / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XSHARE_HOME", str(blocker))  # the record cannot be written under a file
    assert main(["statusline", "install", "--force"]) == 1
    err = capsys.readouterr().err
    assert "install record" in err and "not changed" in err and "Traceback" not in err
    assert path.read_bytes() == THEIR_FILE.encode() and not path.with_name("settings.json.xshare-backup").exists()
    monkeypatch.setenv("XSHARE_HOME", str(isolated_home / "state"))
    assert main(["statusline", "remove"]) == 0
    assert path.read_bytes() == THEIR_FILE.encode()  # their line is still there, not {}


def test_a_failed_settings_write_puts_the_previous_record_back(capsys, isolated_home: Path,
                                                               monkeypatch: pytest.MonkeyPatch):
    path = settings_at(isolated_home)
    assert main(["statusline", "install", "--force"]) == 0
    record = record_path().read_bytes()
    installed = path.read_bytes()

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(settings_file.tempfile, "mkstemp", disk_full)
        assert main(["statusline", "install", "--format", "{calls}"]) == 1
    assert "No space left" in capsys.readouterr().err
    assert path.read_bytes() == installed and record_path().read_bytes() == record
    assert main(["statusline", "remove"]) == 0 and path.read_text() == THEIR_FILE


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_as_settings_is_refused_without_hanging(isolated_home: Path):
    path = isolated_home / ".claude" / "settings.json"
    path.parent.mkdir()
    os.mkfifo(path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for action in ("install", "status", "remove"):
        done = subprocess.run([sys.executable, "-m", "xshare", "statusline", action], capture_output=True,
                              text=True, timeout=60, env=env)
        assert done.returncode == 1 and "not a regular file" in done.stderr, action
    assert stat.S_ISFIFO(path.lstat().st_mode)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_the_owner_is_kept(isolated_home: Path):
    path = settings_at(isolated_home)
    os.chown(path, 4242, 4343)
    assert main(["statusline", "install", "--force"]) == 0
    assert (path.stat().st_uid, path.stat().st_gid) == (4242, 4343)
    assert main(["statusline", "remove"]) == 0
    assert (path.stat().st_uid, path.stat().st_gid) == (4242, 4343) and path.read_text() == THEIR_FILE
