# Sourced by scripts/run and scripts/test: create .venv with Python 3.11+ if it is missing,
# (re)install the project with its dev extras whenever pyproject.toml changed, and put
# .venv/bin first on PATH.

find_python() {
    local candidate
    for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    echo "error: schedboard needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)" >&2
    return 1
}

if [ ! -x .venv/bin/python ]; then
    python=$(find_python)
    echo "==> creating .venv with $python"
    "$python" -m venv .venv
fi

stamp=.venv/.schedboard-installed
wanted=$(sha256sum <pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
    echo "==> installing schedboard and its dev tools into .venv (log: .venv/pip-install.log)"
    if ! .venv/bin/python -m pip install --editable '.[dev]' >.venv/pip-install.log 2>&1; then
        tail -n 30 .venv/pip-install.log >&2
        echo "error: pip install failed; full log in .venv/pip-install.log" >&2
        exit 1
    fi
    echo "$wanted" >"$stamp"
fi

export PATH="$PWD/.venv/bin:$PATH"
