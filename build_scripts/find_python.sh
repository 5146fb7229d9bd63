#!/usr/bin/env sh
# Print the path of a Python >= 3.12 interpreter for the project venv, or explain how to get one.
#
# Tries $PYTHON, then python3.12 (Pyodide 0.27.7 runs 3.12, so tests then match the browser), python3.13, python3.
# A pyenv shim for a version that is installed but not selected fails when run, so pyenv's own version folders are
# searched as well.
set -u

usable() {
    "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

for candidate in ${PYTHON:-} python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && usable "$candidate"; then
        "$candidate" -c 'import sys; print(sys.executable)'
        exit 0
    fi
done

if command -v pyenv >/dev/null 2>&1; then
    root=$(pyenv root)
    for candidate in "$root"/versions/3.12*/bin/python3.12 "$root"/versions/3.13*/bin/python3.13; do
        if [ -x "$candidate" ] && usable "$candidate"; then
            echo "$candidate"
            exit 0
        fi
    done
fi

cat >&2 <<'MSG'
error: no Python >= 3.12 found (tried $PYTHON, python3.12, python3.13, python3 and pyenv's versions).
  Install one (your system's python3.12 package, `pyenv install 3.12`, or python.org),
  or point the Makefile at it: `make PYTHON=/path/to/python3.12 serve`
MSG
exit 1
