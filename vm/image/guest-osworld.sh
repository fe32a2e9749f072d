#!/bin/sh
# mmdebstrap customize hook of `cua vm build --apps osworld`, run after guest-setup.sh: the guest serves
# OSWorld's /osworld routes, which run the task file's commands, so its `cua serve` gets --allow-exec.
# The server still listens only on the VM's NIC, which QEMU forwards to the host's 127.0.0.1, and needs
# the per-VM token. The apps and the metrics' Python packages came with the package lists.
set -eu
START="$1/usr/local/bin/cua-guest-start"
grep -q -- '--sources a11y$' "$START" || { echo "guest-osworld.sh: no serve line in $START" >&2; exit 1; }
sed -i 's|--sources a11y$|--sources a11y --allow-exec|' "$START"
grep -q -- '--allow-exec$' "$START"
