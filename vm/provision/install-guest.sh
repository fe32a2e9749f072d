#!/usr/bin/env bash
# Install the cua guest server on a Debian/Ubuntu desktop VM and start it as a systemd service.
#
#   sudo vm/provision/install-guest.sh [--dry-run] [--user NAME] [--source PIP_SPEC_OR_DIR]
#        [--port 8765] [--mode desktop|sandbox] [--app mousepad] [--display :0] [--root DIR] [--allow-exec]
#
# --dry-run prints every command instead of running it (no root needed). The guest binds
# 127.0.0.1 only; reach it through an SSH tunnel. Its token is created at first start in
# ~USER/.config/cua/token (mode 0600).
set -euo pipefail

DRY_RUN=0
GUEST_USER="cua"
SOURCE=""
PORT=8765
MODE="desktop"
APP="mousepad"
DISPLAY_NAME=":0"
ROOT_DIR=""
ALLOW_EXEC=0
PREFIX="/opt/cua"
UNIT_PATH="/etc/systemd/system/cua-guest.service"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
APT_PACKAGES=(python3 python3-venv python3-pip xvfb xauth openbox xdotool x11-utils dbus dbus-x11
  at-spi2-core python3-pyatspi gir1.2-atspi-2.0 tesseract-ocr fonts-dejavu-core libgl1 libglib2.0-0)

usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "install-guest: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --user) GUEST_USER="${2:?--user needs a name}"; shift ;;
    --source) SOURCE="${2:?--source needs a pip spec or a directory}"; shift ;;
    --port) PORT="${2:?--port needs a number}"; shift ;;
    --mode) MODE="${2:?--mode needs desktop or sandbox}"; shift ;;
    --app) APP="${2:?--app needs a command}"; shift ;;
    --display) DISPLAY_NAME="${2:?--display needs a value like :0}"; shift ;;
    --root) ROOT_DIR="${2:?--root needs a directory}"; shift ;;
    --allow-exec) ALLOW_EXEC=1 ;;
    --prefix) PREFIX="${2:?--prefix needs a directory}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done

if ! [[ "$PORT" =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
  die "--port must be 1..65535, got '$PORT'"
fi
[[ "$GUEST_USER" =~ ^[a-z_][a-z0-9_-]*$ ]] || die "--user must be a plain user name, got '$GUEST_USER'"
[[ "$DISPLAY_NAME" =~ ^:[0-9]+$ ]] || die "--display must look like :0, got '$DISPLAY_NAME'"
[[ "$APP" =~ ^[A-Za-z0-9._/-]+$ ]] || die "--app must be a plain command name, got '$APP'"
case "$MODE" in desktop) ENV_SPEC="desktop" ;; sandbox) ENV_SPEC="sandbox:$APP" ;;
  *) die "--mode must be desktop or sandbox, got '$MODE'" ;; esac
if [ -z "$SOURCE" ]; then SOURCE="$(cd "$HERE/../.." && pwd)"; fi
HOME_DIR="/home/$GUEST_USER"
[ -n "$ROOT_DIR" ] || ROOT_DIR="$HOME_DIR/cua-files"

run() {
  if [ "$DRY_RUN" = 1 ]; then printf '+'; printf ' %q' "$@"; printf '\n'; else "$@"; fi
}

if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then die "run as root (sudo), or pass --dry-run to see the steps"; fi

echo "install-guest: user=$GUEST_USER env=$ENV_SPEC port=$PORT root=$ROOT_DIR source=$SOURCE exec=$ALLOW_EXEC"
run apt-get update -q
run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${APT_PACKAGES[@]}"
if ! id -u "$GUEST_USER" >/dev/null 2>&1; then
  run useradd --create-home --shell /bin/bash "$GUEST_USER"
fi
run install -d -m 0755 "$PREFIX"
run python3 -m venv --system-site-packages "$PREFIX/venv"
run "$PREFIX/venv/bin/pip" install -q --disable-pip-version-check "$SOURCE"
run install -d -o "$GUEST_USER" -g "$GUEST_USER" -m 0700 "$HOME_DIR/.config" "$HOME_DIR/.config/cua"
run install -d -o "$GUEST_USER" -g "$GUEST_USER" -m 0750 "$ROOT_DIR"

EXEC_FLAG=""
[ "$ALLOW_EXEC" = 1 ] && EXEC_FLAG=" --allow-exec"
UNIT="$(sed -e "s|@USER@|$GUEST_USER|g" -e "s|@PREFIX@|$PREFIX|g" -e "s|@PORT@|$PORT|g" \
  -e "s|@ENV@|$ENV_SPEC|g" -e "s|@ROOT@|$ROOT_DIR|g" -e "s|@DISPLAY@|$DISPLAY_NAME|g" \
  -e "s|@EXTRA@|$EXEC_FLAG|g" "$HERE/cua-guest.service")"
if [ "$DRY_RUN" = 1 ]; then
  echo "+ write $UNIT_PATH:"; printf '%s\n' "$UNIT" | sed 's/^/    /'
else
  printf '%s\n' "$UNIT" > "$UNIT_PATH"
  chmod 0644 "$UNIT_PATH"
fi
run systemctl daemon-reload
run systemctl enable --now cua-guest.service
echo "install-guest: done. Token: sudo cat $HOME_DIR/.config/cua/token"
echo "install-guest: from your machine: ssh -N -L $PORT:127.0.0.1:$PORT $GUEST_USER@VM &&" \
  "CUA_TOKEN=... cua observe --env remote:http://127.0.0.1:$PORT"
