#!/usr/bin/env bash
# CycloneDDS 0.10.2 for Python, the version Unitree's robots run (the wheel on the package index is 11.x, whose
# type objects a 0.10 peer rejects for Unitree's nested messages: docs/deploy.md). It builds the Python binding
# from source against Debian's cyclonedds-dev 0.10.2 (tested on Debian 12).
#
#   bash deploy/unitree/install_cyclonedds_0_10.sh [PYTHON]      (PYTHON: default .venv/bin/python, else python3)
#
# Needs root or sudo for apt-get. The build wants CYCLONEDDS_HOME to be a prefix with include/, lib/ and bin/;
# Debian puts the library in its multiarch folder, so the prefix is a folder of links.
set -euo pipefail
PY="${1:-}"
if [ -z "$PY" ]; then
    if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq cyclonedds-dev gcc python3-dev >/dev/null
multiarch="$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("MULTIARCH") or "")')"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
ln -s /usr/include "$prefix/include"
ln -s "/usr/lib/${multiarch}" "$prefix/lib"
ln -s /usr/bin "$prefix/bin"
CYCLONEDDS_HOME="$prefix" "$PY" -m pip install -q --no-binary cyclonedds "cyclonedds==0.10.2"
"$PY" -c 'import importlib.metadata as m; from cyclonedds.domain import DomainParticipant; print("cyclonedds", m.version("cyclonedds"))'
