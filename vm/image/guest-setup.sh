#!/bin/sh
# mmdebstrap customize hook: turn the Debian root in $1 into a cua guest. Runs on the build host as
# root; $WHEELHOUSE holds the Python wheels (no network inside the chroot). The cua package itself
# comes at boot through QEMU's fw_cfg (opt/cua/wheel), so the image is reused across code changes.
set -eu
ROOT="$1"
mkdir -p "$ROOT/tmp/wh" && cp "$WHEELHOUSE"/*.whl "$ROOT/tmp/wh/"
chroot "$ROOT" python3 -m venv /opt/cua/venv
chroot "$ROOT" /opt/cua/venv/bin/pip install -q --no-index --find-links /tmp/wh $GUEST_REQUIREMENTS
rm -rf "$ROOT/tmp/wh"
chroot "$ROOT" useradd -m -s /bin/bash -u 1000 cua

cat > "$ROOT/etc/fstab" <<FSTAB
/dev/vda / ext4 rw,relatime 0 1
FSTAB
echo cua-guest > "$ROOT/etc/hostname"
echo qemu_fw_cfg > "$ROOT/etc/modules-load.d/cua.conf"
mkdir -p "$ROOT/etc/systemd/network"
cat > "$ROOT/etc/systemd/network/10-dhcp.network" <<NET
[Match]
Name=en* eth*
[Network]
DHCP=ipv4
NET
chroot "$ROOT" systemctl enable systemd-networkd.service

cat > "$ROOT/usr/local/bin/cua-guest-start" <<'START'
#!/bin/sh
# Boot-time start of the guest: token and cua wheel from fw_cfg, then `cua serve` on the VM's NIC
# (QEMU forwards it to the host's 127.0.0.1 only).
set -eu
umask 022  # the venv is read by the cua user (the unit's UMask=0077 would make it root-only)
FW=/sys/firmware/qemu_fw_cfg/by_name/opt/cua
for i in $(seq 50); do [ -e "$FW/token/raw" ] && break; sleep 0.1; done
CUA_TOKEN="$(cat "$FW/token/raw")"; export CUA_TOKEN
WHEEL_NAME="$(cat "$FW/wheel_name/raw")"
if [ ! -e "/opt/cua/installed-$WHEEL_NAME" ]; then
  cp "$FW/wheel/raw" "/tmp/$WHEEL_NAME"
  /opt/cua/venv/bin/pip install -q --no-index --no-deps --force-reinstall "/tmp/$WHEEL_NAME"
  rm -f /opt/cua/installed-* "/tmp/$WHEEL_NAME"; touch "/opt/cua/installed-$WHEEL_NAME"
fi
APP="$(cat "$FW/app/raw" 2>/dev/null || echo mousepad)"
# A TCG guest on a busy host is slow: the app gets minutes to map its window, not the default 45 s.
CUA_SANDBOX_TIMEOUT="$(cat "$FW/sandbox_timeout/raw" 2>/dev/null || echo 600)"; export CUA_SANDBOX_TIMEOUT
cd /home/cua
exec runuser -u cua -- env HOME=/home/cua CUA_TOKEN="$CUA_TOKEN" PATH=/usr/local/bin:/usr/bin:/bin \
  CUA_SANDBOX_TIMEOUT="$CUA_SANDBOX_TIMEOUT" /opt/cua/venv/bin/cua serve --host 0.0.0.0 --port 8765 --env "sandbox:$APP" --sources a11y
START
chmod 0755 "$ROOT/usr/local/bin/cua-guest-start"
cat > "$ROOT/etc/systemd/system/cua-guest.service" <<UNIT
[Unit]
Description=cua guest server (token and wheel from QEMU fw_cfg)
After=network-online.target systemd-modules-load.service
Wants=network-online.target
[Service]
Type=simple
ExecStart=/usr/local/bin/cua-guest-start
Restart=on-failure
RestartSec=2
UMask=0077
[Install]
WantedBy=multi-user.target
UNIT
chroot "$ROOT" systemctl enable cua-guest.service
chroot "$ROOT" systemctl enable serial-getty@ttyS0.service || true

# `cua vm ssh`: sshd with a host key and an authorized key made per VM on the host (fw_cfg, root-only
# in the guest), so no two VMs share a key and the host checks the guest's key exactly. No passwords.
rm -f "$ROOT"/etc/ssh/ssh_host_*
cat > "$ROOT/etc/ssh/sshd_config.d/cua.conf" <<SSHD
HostKey /etc/ssh/ssh_host_ed25519_key
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
SSHD
cat > "$ROOT/usr/local/bin/cua-ssh-keys" <<'KEYS'
#!/bin/sh
set -eu
FW=/sys/firmware/qemu_fw_cfg/by_name/opt/cua
for i in $(seq 50); do [ -e "$FW/ssh_host_key/raw" ] && break; sleep 0.1; done
umask 077
mkdir -p /root/.ssh
cat "$FW/ssh_host_key/raw" > /etc/ssh/ssh_host_ed25519_key
cat "$FW/ssh_authorized/raw" > /root/.ssh/authorized_keys
KEYS
chmod 0755 "$ROOT/usr/local/bin/cua-ssh-keys"
cat > "$ROOT/etc/systemd/system/cua-ssh-keys.service" <<UNIT
[Unit]
Description=per-VM ssh keys from QEMU fw_cfg
After=systemd-modules-load.service
Before=ssh.service
[Service]
Type=oneshot
ExecStart=/usr/local/bin/cua-ssh-keys
[Install]
WantedBy=multi-user.target
UNIT
chroot "$ROOT" systemctl enable cua-ssh-keys.service
chroot "$ROOT" passwd -d root
