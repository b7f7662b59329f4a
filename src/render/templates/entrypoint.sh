#!/bin/sh
# tfimg entrypoint, generated from spec `@NAME@`: edit the spec, not this file.
# It is the image's ENTRYPOINT and the only place that knows the run-time contract:
#
#   TFIMG_UID, TFIMG_GID       when started as root, the in-image user `@USER@` takes these
#                              ids (files written on mounts then belong to the host user)
#                              and root is dropped before anything else runs
#   TFIMG_JUPYTER_TOKEN        Jupyter's token; one is generated when it is missing, so
#                              Jupyter never runs without one
#   TFIMG_SSH_AUTHORIZED_KEYS  public keys that may log in over SSH (keys only)
#
# With arguments it runs them instead of the service: `tfimg run SPEC -- CMD`.
set -eu

user=@USER@
home=/home/@USER@
workdir=@WORKDIR@
service=@SERVICE@
# Where the spec's `files:` were copied (owned by the user, like the home folder).
copied="@COPIED@"

say() { printf 'tfimg: %s\n' "$*" >&2; }

# own PATH: give the files under PATH that belong to the image's ids to the host's ids,
# skipping every mount point below PATH (the user's folders are never re-owned).
own() {
    root=$1
    set --
    while read -r _ mount _; do
        case "$mount" in "$root"/*) set -- "$@" -path "$mount" -prune -o ;; esac
    done </proc/self/mounts
    find "$root" -xdev "$@" \( -uid "$old_uid" -o -gid "$old_gid" \) -exec chown -h "$uid:$gid" {} +
}

# Phase 1 (PID 1, before tini): map the user, drop root, and hand PID 1 to tini, so no
# process of the container keeps running as root.
if [ -z "${TFIMG_INNER:-}" ]; then
    export TFIMG_INNER=1
    if [ "$(id -u)" = 0 ] && [ -n "${TFIMG_UID:-}" ]; then
        uid=$TFIMG_UID
        gid=${TFIMG_GID:-$TFIMG_UID}
        case "$uid:$gid" in
            *[!0-9:]* | :* | *:) say "TFIMG_UID and TFIMG_GID must be numbers, got '$uid:$gid'"; exit 64 ;;
        esac
        old_uid=$(id -u "$user")
        old_gid=$(id -g "$user")
        if [ "$uid:$gid" != "$old_uid:$old_gid" ]; then
            # Edit the account directly: usermod would also re-own files under $home,
            # following mounts into the host's folders.
            sed -i "s/^$user:\([^:]*\):$old_uid:$old_gid:/$user:\1:$uid:$gid:/" /etc/passwd
            sed -i "s/^$user:\([^:]*\):$old_gid:/$user:\1:$gid:/" /etc/group
            # The image's own files (home, workdir, the spec's files), never what is
            # mounted there: mount points are pruned and -xdev stops below them.
            for path in "$home" "$workdir" $copied; do
                [ -e "$path" ] || continue
                mountpoint -q "$path" 2>/dev/null && continue
                own "$path" || say "could not hand $path to $uid:$gid"
            done
        fi
        export HOME="$home" USER="$user" LOGNAME="$user"
        unset TFIMG_UID TFIMG_GID
        exec setpriv --reuid="$uid" --regid="$gid" --init-groups -- /usr/bin/tini -g -- "$0" "$@"
    fi
    exec /usr/bin/tini -g -- "$0" "$@"
fi

# Phase 2 (under tini, as the user): the command, or the service.
if [ "$#" -gt 0 ]; then
    exec "$@"
fi

@TENSORBOARD@
case "$service" in
    jupyter)
        if [ -z "${TFIMG_JUPYTER_TOKEN:-}" ]; then
            TFIMG_JUPYTER_TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
            export TFIMG_JUPYTER_TOKEN
            say "no token was given; generated one: $TFIMG_JUPYTER_TOKEN"
        fi
        exec jupyter lab
        ;;
    ssh)
        if [ -z "${TFIMG_SSH_AUTHORIZED_KEYS:-}" ]; then
            say "no public key in TFIMG_SSH_AUTHORIZED_KEYS; password login is disabled, so sshd is not started"
            exit 64
        fi
        mkdir -p "$HOME/.ssh"
        chmod 700 "$HOME/.ssh"
        printf '%s\n' "$TFIMG_SSH_AUTHORIZED_KEYS" >"$HOME/.ssh/authorized_keys"
        chmod 600 "$HOME/.ssh/authorized_keys"
        # sshd gives sessions a bare environment: hand them the image's (venv, CUDA paths).
        env | grep -Ev '^(TFIMG_|HOME=|USER=|LOGNAME=|SHELL=|PWD=|OLDPWD=|SHLVL=|_=|HOSTNAME=)' \
            >"$HOME/.ssh/environment" || true
        # A host key per container, made at start: no private key lives in an image layer.
        host_key="$HOME/.ssh/ssh_host_ed25519_key"
        [ -f "$host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$host_key"
        # `tfimg run` reads this line to pin the host key in its known_hosts file.
        say "ssh host key: $(cat "$host_key.pub")"
        # Only the container's own user may log in; root only when that user is uid 0
        # (a root host user, or `--user root`), and then by key like everyone else.
        root_login=no
        [ "$(id -u)" != 0 ] || root_login=prohibit-password
        exec /usr/sbin/sshd -D -e -f /opt/tfimg/sshd_config -o "HostKey=$host_key" \
            -o "AllowUsers=${USER:-$(id -un)}" -o "PermitRootLogin=$root_login"
        ;;
    *)
        say "headless image: no service to start, waiting; pass a command or use \`tfimg exec\`"
        exec sleep infinity
        ;;
esac
