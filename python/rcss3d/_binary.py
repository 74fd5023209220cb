"""Finding the server binary: the one this package was installed with."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path


class BinaryNotFound(FileNotFoundError):
    """No rcss3d server binary was found."""


def server_binary(name: str = "rcss3d") -> Path:
    """The path of the server binary ``name`` (``rcss3d``, ``rcssserver3d``
    or ``simspark``).

    Looked for, in order: ``$RCSS3D_BIN`` (a path to use instead, for a
    development build), the scripts directory of this Python environment
    (where the wheel puts it), beside ``sys.executable``, then ``PATH``.
    """
    override = os.environ.get("RCSS3D_BIN")
    if override:
        path = Path(override)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise BinaryNotFound(f"$RCSS3D_BIN={override} is not an executable file")
    exe = name + (".exe" if sys.platform == "win32" else "")
    candidates = []
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / exe)
    candidates.append(Path(sys.executable).parent / exe)
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if found:
        return Path(found)
    raise BinaryNotFound(
        f"the {name} binary is not installed in this environment nor on PATH "
        "(pip install rcss3d, or set RCSS3D_BIN)"
    )
