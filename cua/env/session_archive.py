"""A recording session directory as a tar stream, and its safe unpacking: how a guest's recording reaches the host.

The guest (`GET /recording/{session}/archive`) writes the tar itself, one member at a time, so memory stays
bounded however long the video is; only directories and regular files go in, paths relative to the session.
The host refuses any member that is absolute, climbs out with `..`, or is a link or device, then unpacks with
tarfile's "data" filter as well, into a private (0700/0600) folder renamed into place when it is whole.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from cua.env.base import EnvError

# what the guest's recorder names a session (rec-YYYYmmdd-HHMMSS[-N]); anything else never names a folder
SESSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
CHUNK = 256 * 1024


def valid_session(name: str) -> bool:
    """True for a plain folder name: no separator, no leading dot, no `..`, at most 128 characters."""
    return bool(SESSION_NAME.match(name)) and ".." not in name


def _members(root: Path) -> Iterator[tuple[str, os.stat_result, Path]]:
    """(relative name, lstat, path) of every directory and regular file under `root`; links are left out."""
    stack = [(root, "")]
    while stack:
        folder, rel = stack.pop()
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            st = e.stat(follow_symlinks=False)
            name = f"{rel}{e.name}"
            if stat.S_ISDIR(st.st_mode):
                yield name, st, Path(e.path)
                stack.append((Path(e.path), name + "/"))
            elif stat.S_ISREG(st.st_mode):
                yield name, st, Path(e.path)


def _header(name: str, st: os.stat_result, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.mode = stat.S_IMODE(st.st_mode) & 0o700
    info.mtime = int(st.st_mtime)
    if stat.S_ISDIR(st.st_mode):
        info.type, info.size = tarfile.DIRTYPE, 0
    else:
        info.size = size
    return info.tobuf(format=tarfile.PAX_FORMAT)


def tar_stream(root: Path) -> Iterator[bytes]:
    """The tar of the session folder `root`, streamed in chunks of at most CHUNK bytes (plus headers).

    Files are opened without following links; a file that shrank while being read ends the stream early,
    which the client sees as a truncated archive rather than a quietly wrong one."""
    for name, st, path in _members(root):
        if stat.S_ISDIR(st.st_mode):
            yield _header(name, st, 0)
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # gone or replaced by a link since the listing: leave it out
        with os.fdopen(fd, "rb") as fh:
            size = os.fstat(fd).st_size
            yield _header(name, st, size)
            left = size
            while left:
                chunk = fh.read(min(CHUNK, left))
                if not chunk:
                    raise OSError(f"{path} shrank while being archived")
                left -= len(chunk)
                yield chunk
            if size % tarfile.BLOCKSIZE:
                yield tarfile.NUL * (tarfile.BLOCKSIZE - size % tarfile.BLOCKSIZE)
    yield tarfile.NUL * (2 * tarfile.BLOCKSIZE)  # end of archive


def _check_member(m: tarfile.TarInfo) -> None:
    p = PurePosixPath(m.name)
    if m.name.startswith(("/", "\\")) or p.is_absolute() or ".." in p.parts or "\\" in m.name or not m.name:
        raise EnvError(f"the guest's recording archive holds an unsafe path {m.name!r}; nothing was unpacked")
    if not (m.isreg() or m.isdir()):
        raise EnvError(f"the guest's recording archive holds {m.name!r}, which is a link or special file; "
                       "nothing was unpacked")


def check_new_folder(out: Path) -> None:
    """`out` may receive a recording: it does not exist yet, or is an empty folder."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise EnvError(f"{out} already exists and is not an empty folder; pick a new --out")


def unpack(archive: Path, out: Path) -> Path:
    """Unpack a session tar into the new folder `out` (0700, files 0600); refuse unsafe members first."""
    check_new_folder(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.part-", dir=out.parent))  # 0700
    try:
        try:
            with tarfile.open(archive, mode="r:") as tar:
                members = tar.getmembers()
                for m in members:
                    _check_member(m)
                tar.extractall(stage, members=members, filter="data")
        except (tarfile.TarError, EOFError) as e:
            raise EnvError(f"the guest's recording archive is damaged ({e}); fetch it again") from None
        for folder, _dirs, files in os.walk(stage):
            os.chmod(folder, 0o700)
            for f in files:
                os.chmod(os.path.join(folder, f), 0o600)
        if out.exists():
            out.rmdir()  # the empty folder the caller may have made
        os.replace(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return out
