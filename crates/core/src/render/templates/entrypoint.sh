#!/bin/sh
# tfimg entrypoint, generated from spec `@NAME@`: edit the spec, not this file.
# It is the image's ENTRYPOINT and the only place that knows the run-time contract:
#
#   TFIMG_UID, TFIMG_GID       when started as root, the in-image user `@USER@` takes these
#                              ids (files written on mounts then belong to the host user)
#                              and root is dropped before anything else runs; taking uid 0
#                              (a host user who is root) keeps no capability either
#   TFIMG_JUPYTER_TOKEN        Jupyter's token; one is generated when it is missing, so
#                              Jupyter never runs without one
#   TFIMG_SSH_AUTHORIZED_KEYS  public keys that may log in over SSH (keys only)
#   TFIMG_SSH_PORT             the port sshd listens on instead of the spec's (`tfimg k8s`
#                              sets it: a pod without capabilities cannot bind 22)
#   TFIMG_IDLE_CONTAINERS      seconds: the service runs under tfimg's idle watch
#                              (@TFIMG_DIR@/idle.py), which stops the container when nobody
#                              used it for that long (a team's `idle: {containers: 12h}`)
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

# Mount points of this container, as /proc/self/mountinfo writes them (a space is
# `\040`). Fails when it cannot be read: then nothing may be re-owned.
mount_points() {
    [ -r /proc/self/mountinfo ] || return 1
    while read -r _ _ _ _ point _; do
        printf '%s\n' "$point"
    done </proc/self/mountinfo
}

# Whether PATH is a mount point or lies under one (other than the container's root): then
# it is the host's (or a volume's) and never re-owned. The paths asked about are the home,
# the workdir and the spec's `files:` destinations, which tfimg allows only letters,
# digits, `/-_.`, so they compare as mountinfo writes them.
on_a_mount() {
    while read -r point; do
        case "$point" in '' | /) continue ;; esac
        case "$1" in "$point" | "$point"/*) return 0 ;; esac
    done <<EOF_MOUNTS
$points
EOF_MOUNTS
    return 1
}

# own PATH: give the files under PATH that belong to the image's ids to the host's ids,
# never crossing into a mount below PATH: mount points are pruned (their escapes decoded
# and glob characters quoted for find) and -xdev stops at any other file system.
own() {
    root=$1
    set --
    while read -r point; do
        case "$point" in "$root"/*) ;; *) continue ;; esac
        point=$(printf '%b' "$(printf '%s' "$point" | sed 's/\\\([0-7]\)/\\0\1/g')" | sed 's/[][*?\\]/\\&/g')
        set -- "$@" -path "$point" -prune -o
    done <<EOF_MOUNTS
$points
EOF_MOUNTS
    find "$root" -xdev "$@" \( -uid "$old_uid" -o -gid "$old_gid" \) -exec chown -h "$uid:$gid" {} +
}

# A uid or gid a container may take: 0 to 2147483647. 4294967295 is (uid_t)-1, "leave
# unchanged" to setpriv: the process would stay root with every capability.
valid_id() {
    case "$1" in '' | *[!0-9]*) return 1 ;; esac
    [ "${#1}" -le 10 ] && [ "$1" -le 2147483647 ]
}

# Phase 1 (PID 1, before tini): map the user, drop root, and hand PID 1 to tini, so no
# process of the container keeps running as root.
if [ -z "${TFIMG_INNER:-}" ]; then
    export TFIMG_INNER=1
    if [ "$(id -u)" = 0 ] && [ -n "${TFIMG_UID:-}" ]; then
        uid=$TFIMG_UID
        gid=${TFIMG_GID:-$TFIMG_UID}
        if ! valid_id "$uid" || ! valid_id "$gid"; then
            say "TFIMG_UID and TFIMG_GID must be numbers from 0 to 2147483647, got '$uid:$gid'"
            exit 64
        fi
        old_uid=$(id -u "$user")
        old_gid=$(id -g "$user")
        if [ "$uid:$gid" != "$old_uid:$old_gid" ]; then
            # Edit the account directly: usermod would also re-own files under $home,
            # following mounts into the host's folders.
            sed -i "s/^$user:\([^:]*\):$old_uid:$old_gid:/$user:\1:$uid:$gid:/" /etc/passwd
            sed -i "s/^$user:\([^:]*\):$old_gid:/$user:\1:$gid:/" /etc/group
            # The image's own files (home, workdir, the spec's files), never what is
            # mounted: a path on or under a mount is skipped whole, mounts below a path
            # are pruned, and without a readable mount table nothing is touched.
            if points=$(mount_points); then
                for path in "$home" "$workdir" $copied; do
                    [ -e "$path" ] || continue
                    if on_a_mount "$path"; then
                        say "$path is on a mount: left as it is"
                        continue
                    fi
                    own "$path" || say "could not hand $path to $uid:$gid"
                done
            else
                say "cannot read /proc/self/mountinfo: no file is handed to $uid:$gid"
            fi
        fi
        export HOME="$home" USER="$user" LOGNAME="$user"
        unset TFIMG_UID TFIMG_GID
        # Changing to another uid clears the capabilities; staying at uid 0 would keep them,
        # and an exec as uid 0 takes the whole bounding set back: empty it (tfimg keeps
        # SETPCAP for this), so root's ids come without any of root's powers.
        if [ "$uid" -eq 0 ]; then
            exec setpriv --reuid=0 --regid="$gid" --init-groups --inh-caps=-all \
                --bounding-set=-all -- /usr/bin/tini -g -- "$0" "$@"
        fi
        exec setpriv --reuid="$uid" --regid="$gid" --init-groups -- /usr/bin/tini -g -- "$0" "$@"
    fi
    exec /usr/bin/tini -g -- "$0" "$@"
fi

# Phase 2 (under tini, as the user): the command, or the service.
if [ "$#" -gt 0 ]; then
    exec "$@"
fi

# The idle watch: it starts the service and stays its parent.
watch=
case "${TFIMG_IDLE_CONTAINERS:-}" in
    '') ;;
    *[!0-9]*) say "TFIMG_IDLE_CONTAINERS must be whole seconds, got '$TFIMG_IDLE_CONTAINERS'"; exit 64 ;;
    *) watch="@VENV@/bin/python @TFIMG_DIR@/idle.py $TFIMG_IDLE_CONTAINERS --" ;;
esac

@TENSORBOARD@
case "$service" in
    jupyter)
        if [ -z "${TFIMG_JUPYTER_TOKEN:-}" ]; then
            TFIMG_JUPYTER_TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
            export TFIMG_JUPYTER_TOKEN
            say "no token was given; generated one: $TFIMG_JUPYTER_TOKEN"
        fi
        exec $watch jupyter lab
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
        # TFIMG_SSH_PORT moves sshd off the spec's port: on Kubernetes a user without
        # capabilities cannot bind a port below 1024 (`tfimg k8s` sets it).
        set -- -f /opt/tfimg/sshd_config
        case "${TFIMG_SSH_PORT:-}" in
            '') ;;
            *[!0-9]*) say "TFIMG_SSH_PORT must be a port number, got '$TFIMG_SSH_PORT'"; exit 64 ;;
            *) set -- "$@" -p "$TFIMG_SSH_PORT" ;;
        esac
        exec $watch /usr/sbin/sshd -D -e "$@" -o "HostKey=$host_key" \
            -o "AllowUsers=${USER:-$(id -un)}" -o "PermitRootLogin=$root_login"
        ;;
@SERVING@
    *)
        say "headless image: no service to start, waiting; pass a command or use \`tfimg exec\`"
        exec $watch sleep infinity
        ;;
esac
