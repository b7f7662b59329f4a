# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tfimg_global_optspecs
    string join \n v/verbose H/host= context= h/help V/version
end

function __fish_tfimg_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_tfimg_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_tfimg_using_subcommand
    set -l cmd (__fish_tfimg_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c tfimg -n "__fish_tfimg_needs_command" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_needs_command" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_needs_command" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_needs_command" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_needs_command" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "list" -d 'List the built-in and local specs with their TensorFlow, Python, CUDA and cuDNN'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "show" -d 'Print a spec fully resolved (defaults, versions, pins) as YAML'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "render" -d 'Print the Dockerfile a spec renders to, or write it with its context to a folder'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "build" -d 'Build a spec\'s image through the Docker API, verify it, and tag it'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "lock" -d 'Resolve a spec once and write SPEC.lock beside it (every pip distribution with its sha256, every apt package with its version), or check that the lock still fits'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "base" -d 'Base images without a registry'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "run" -d 'Start a container from a spec (built first when its image is missing or stale) or an image: GPUs, mounts, ports, Jupyter token, SSH key, the host user\'s uid/gid'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "ps" -d 'List tfimg\'s containers with their URLs and GPUs'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "logs" -d 'Print a container\'s output'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "exec" -d 'Run a command in a running container, as its user'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "stop" -d 'Stop containers (they can be started again with `docker start`)'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "rm" -d 'Remove stopped containers (`-f` also running ones). Mounts and volumes stay'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "pull-files" -d 'Copy files out of a container (running or stopped) into a local folder: new and changed files only; nothing local is deleted'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "forward" -d 'Reach the ports of a detached container on a remote engine from this machine again: opens its ssh tunnel (or prints the open one\'s addresses); `--close` closes it'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "doctor" -d 'Check Docker, the NVIDIA driver and toolkit, and a spec against them, with fixes'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "up" -d 'Bring up every member of a team file (new and changed ones; unchanged stay)'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "down" -d 'Remove a team\'s containers (never the data on their mounts)'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "compose" -d 'Write a team as a Compose file (secrets in env files beside it)'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "push" -d 'Push an image to a registry (so a cluster can pull it) and print it by digest'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "save" -d 'Write specs\' images (and the spec files and locks) and images into one bundle, to carry to a machine without a registry'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "load" -d 'Load a bundle from `tfimg save`: every part checked against its sha256 first, then the images into Docker and the specs into `./images`'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "k8s" -d 'Write a team as Kubernetes manifests (Deployments, Services, Secrets, claims, and indexed Jobs with TF_CONFIG for multi-worker training)'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "sweep" -d 'Run a sweep file: many trials of one command over a grid, a seeded random search or a list of params, queued onto the GPUs (or CPU slots) of this host, resumable; or look at a sweep with `status`, `results`, `stop` and `report`'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "serve" -d 'Serve a SavedModel folder (numbered versions, `MODEL_DIR/1/saved_model.pb`), or the models of a model config file, over TensorFlow Serving\'s REST and gRPC APIs: waits until the models answer and prints a request to try; new versions copied into the folder are served without a restart'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "completions" -d 'Print the completion script for a shell (`tfimg completions bash > /etc/bash_completion.d/tfimg`; zsh: into a folder of `$fpath` as `_tfimg`)'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "man" -d 'Print a man page: tfimg\'s, or a command\'s (`tfimg man run > tfimg-run.1`)'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "prune-superseded" -d 'Internal: drop superseded builds of a spec (started by `build` in the background)'
complete -c tfimg -n "__fish_tfimg_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tfimg -n "__fish_tfimg_using_subcommand list" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand list" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand list" -l json -d 'Print JSON instead of a table'
complete -c tfimg -n "__fish_tfimg_using_subcommand list" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand list" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand list" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand show" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand show" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand show" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand show" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand show" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand render" -s o -l output -d 'Write the Dockerfile and every context file into this folder instead of printing' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand render" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand render" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand render" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand render" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand render" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand render" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand render" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand render" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand render" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -s t -l tag -d 'An extra tag for the image (`team/lab:1`), besides `tfimg/<name>:<tensorflow>`' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -l progress -r -f -a "auto\t'A live display on a terminal, plain lines otherwise'
plain\t'The daemon\'s output line by line (for CI logs)'
json\t'One JSON event per line on stdout'"
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -l no-cache -d 'Rebuild every layer, even when an image with the same build key exists'
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -l pull -d 'Pull the base image first (from Docker Hub or `--registry-mirror`)'
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -l bootstrap-base -d 'Make a missing Debian/Ubuntu base with `tfimg base bootstrap` instead of failing'
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -l no-verify -d 'Skip the check that TensorFlow imports and its CUDA libraries resolve'
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tfimg -n "__fish_tfimg_using_subcommand build" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -s o -l output -d 'Write (or, with --check, read) the lock here instead of beside the spec file; a built-in spec has no file, so locking one needs it' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -l progress -r -f -a "auto\t'A live display on a terminal, plain lines otherwise'
plain\t'The daemon\'s output line by line (for CI logs)'
json\t'One JSON event per line on stdout'"
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -l check -d 'Only compare the spec with its lock: exit 0 when they agree, 1 naming each difference. Needs no Docker'
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -l fresh -d 'Resolve every layer anew, rather than taking the layers up to TensorFlow\'s from a lock beside it (or a built-in\'s) that was made from the same inputs'
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tfimg -n "__fish_tfimg_using_subcommand lock" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and not __fish_seen_subcommand_from bootstrap help" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and not __fish_seen_subcommand_from bootstrap help" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and not __fish_seen_subcommand_from bootstrap help" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and not __fish_seen_subcommand_from bootstrap help" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and not __fish_seen_subcommand_from bootstrap help" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and not __fish_seen_subcommand_from bootstrap help" -f -a "bootstrap" -d 'Build a Debian or Ubuntu base image from an apt mirror with debootstrap and import it under REF (for machines where Docker Hub is unreachable)'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and not __fish_seen_subcommand_from bootstrap help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and __fish_seen_subcommand_from bootstrap" -l mirror -d 'The apt mirror debootstrap downloads from (default: the distribution\'s own)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and __fish_seen_subcommand_from bootstrap" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and __fish_seen_subcommand_from bootstrap" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and __fish_seen_subcommand_from bootstrap" -l force -d 'Replace an existing image of that name'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and __fish_seen_subcommand_from bootstrap" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and __fish_seen_subcommand_from bootstrap" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and __fish_seen_subcommand_from bootstrap" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and __fish_seen_subcommand_from help" -f -a "bootstrap" -d 'Build a Debian or Ubuntu base image from an apt mirror with debootstrap and import it under REF (for machines where Docker Hub is unreachable)'
complete -c tfimg -n "__fish_tfimg_using_subcommand base; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l gpus -d 'GPUs: `all`, a count (`2`), indices (`0,1`), UUIDs (`GPU-...`), or `none` [default: the GPUs no other tfimg container holds, for GPU images where the host\'s driver and the NVIDIA container toolkit can give them, else `none` with a note]. A count takes the least-loaded free GPUs' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l idle-kernels -d 'Shut down Jupyter kernels that ran nothing for this long (`1h`, `30m`), with Jupyter\'s own culling, so an idle notebook lets go of its GPU memory' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l idle-containers -d 'Stop the container when nobody used it for this long (`12h`): no Jupyter kernel or terminal, no SSH or exec session, no process left running, no GPU in use' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l gpu-mode -d 'How GPUs reach the container: `devices` (Docker\'s nvidia driver), `cdi`, or `runtime` (hosts that only register the nvidia runtime)' -r -f -a "auto\t'CDI where the daemon supports it, else the `nvidia` device driver'
devices\t'A DeviceRequest for Docker\'s `nvidia` driver (the NVIDIA container toolkit\'s hook)'
cdi\t'A DeviceRequest for CDI devices (`nvidia.com/gpu=0`), Docker API 1.44 and later'
runtime\t'The `nvidia` runtime plus NVIDIA_VISIBLE_DEVICES, for hosts that only register it'"
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -s m -l mount -d 'Mount a host folder: `SRC[:DST][:ro]`; DST defaults to `<workdir>/<name of SRC>`, a missing SRC folder is created' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l sync -d 'Copy a local folder or file into the container before it starts: `SRC[:DST]`; DST defaults to `<workdir>/<name of SRC>`. What `.gitignore` and `.dockerignore` leave out stays behind, and so does `.git`. Works on remote engines, unlike `--mount`' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l volume -d 'Mount a named Docker volume: `NAME:DST[:ro]`. Docker creates it on first use and keeps it between runs; `rm` and `down` never remove it' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -s p -l publish -d 'Publish a container port: `CONTAINER` or `HOST:CONTAINER` (on 127.0.0.1)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l name -d 'The container\'s name [default: <spec>-<6 hex>]' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -s e -l env -d 'Set an environment variable (`KEY=value`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l memory -d 'Memory limit (`16g`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l cpus -d 'CPU limit (`4`, `1.5`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l shm-size -d 'Size of /dev/shm, used by tf.data and multi-worker loaders' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l restart -d 'Restart policy: `no`, `always`, `unless-stopped`, `on-failure[:N]`' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l ssh-key -d 'The public key an SSH image admits [default: ~/.ssh/id_ed25519.pub, ~/.ssh/id_rsa.pub, else a key pair tfimg makes in its data folder]' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l user -d '`root` runs the container as root instead of the host user (an explicit opt-out)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l uid -d 'Run as this uid instead of the invoking user\'s (with --gid)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l gid -d 'Run as this gid instead of the invoking user\'s' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l progress -r -f -a "auto\t'A live display on a terminal, plain lines otherwise'
plain\t'The daemon\'s output line by line (for CI logs)'
json\t'One JSON event per line on stdout'"
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l share-gpus -d 'Allow GPUs other tfimg containers hold (refused otherwise, naming who holds them); the container is labelled as sharing'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l sync-back -d 'After the command exits (or Ctrl-C), copy each `--sync` destination back into its source: new and changed files only; nothing local is deleted'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l public -d 'Bind published ports on every interface (0.0.0.0) instead of 127.0.0.1'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -s d -l detach -d 'Run in the background and print how to reach the service'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l no-wait -d 'Do not wait for Jupyter or SSH to answer before printing'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l no-build -d 'Never build: fail when the spec\'s image is missing'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l no-start -d 'Create the container but do not start it (prints its name)'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -l keep -d 'Keep a foreground container after it exits (it is removed by default)'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tfimg -n "__fish_tfimg_using_subcommand run" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand ps" -l team -d 'Only the containers of this team' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand ps" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand ps" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand ps" -l json -d 'Print JSON instead of a table'
complete -c tfimg -n "__fish_tfimg_using_subcommand ps" -l show-tokens -d 'Show Jupyter URLs with their tokens (hidden by default: anyone reading the screen or a log could use them)'
complete -c tfimg -n "__fish_tfimg_using_subcommand ps" -l gpus -d 'Show the GPUs instead: per GPU its memory and utilisation now and who holds it, per container its GPUs and the GPU memory its processes use'
complete -c tfimg -n "__fish_tfimg_using_subcommand ps" -l watch -d 'With `--gpus`: show it again every 2 seconds, in place, until Ctrl-C (exit 130)'
complete -c tfimg -n "__fish_tfimg_using_subcommand ps" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand ps" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand ps" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand logs" -l tail -d 'Only the last N lines' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand logs" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand logs" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand logs" -s f -l follow -d 'Keep printing new output until the container stops'
complete -c tfimg -n "__fish_tfimg_using_subcommand logs" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand logs" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand logs" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand exec" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand exec" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand exec" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand exec" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand exec" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand stop" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand stop" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand stop" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand stop" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand stop" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand rm" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand rm" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand rm" -s f -l force -d 'Stop running containers first'
complete -c tfimg -n "__fish_tfimg_using_subcommand rm" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand rm" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand rm" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand pull-files" -l from -d 'The path in the container [default: its first `--sync` destination, else its workdir]' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand pull-files" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand pull-files" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand pull-files" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand pull-files" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand pull-files" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand forward" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand forward" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand forward" -l close -d 'Close its tunnel instead (the container keeps running)'
complete -c tfimg -n "__fish_tfimg_using_subcommand forward" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand forward" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand forward" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand doctor" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand doctor" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand doctor" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand doctor" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand doctor" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand doctor" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand doctor" -l json -d 'Print JSON: one object per check with its verdict and fix'
complete -c tfimg -n "__fish_tfimg_using_subcommand doctor" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -l progress -r -f -a "auto\t'A live display on a terminal, plain lines otherwise'
plain\t'The daemon\'s output line by line (for CI logs)'
json\t'One JSON event per line on stdout'"
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -l rollback -d 'When a member (or the gateway) fails to start, remove what this `up` started, also where members already ran before it (the default only for a team that had none)'
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -l no-rollback -d 'Keep the members that came up when another fails, even for a team that had none running before (the default then removes what this `up` made)'
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tfimg -n "__fish_tfimg_using_subcommand up" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand down" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand down" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand down" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand down" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand down" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -s o -l output -d 'Write the Compose file here (env files go beside it) instead of printing it' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -l build -d 'Build the members\' images that are missing first (needs the Docker daemon)'
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand compose" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand push" -l registry -d 'The registry host (`127.0.0.1:5000`, `registry.example.com`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand push" -l progress -r -f -a "auto\t'A live display on a terminal, plain lines otherwise'
plain\t'The daemon\'s output line by line (for CI logs)'
json\t'One JSON event per line on stdout'"
complete -c tfimg -n "__fish_tfimg_using_subcommand push" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand push" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand push" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand push" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tfimg -n "__fish_tfimg_using_subcommand push" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -s o -l output -d 'The bundle to write (a tar; written beside it first, then renamed into place)' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -l progress -r -f -a "auto\t'A live display on a terminal, plain lines otherwise'
plain\t'The daemon\'s output line by line (for CI logs)'
json\t'One JSON event per line on stdout'"
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tfimg -n "__fish_tfimg_using_subcommand save" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand load" -s o -l output -d 'Where the bundle\'s spec files and locks go (`tfimg list` reads `./images`)' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand load" -l progress -r -f -a "auto\t'A live display on a terminal, plain lines otherwise'
plain\t'The daemon\'s output line by line (for CI logs)'
json\t'One JSON event per line on stdout'"
complete -c tfimg -n "__fish_tfimg_using_subcommand load" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand load" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand load" -l force -d 'Replace spec files and locks in DIR that differ from the bundle\'s'
complete -c tfimg -n "__fish_tfimg_using_subcommand load" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand load" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tfimg -n "__fish_tfimg_using_subcommand load" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -s o -l output -d 'Write `<team>.yaml` (and `<team>.tfjob.yaml`) into this folder instead of printing' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l registry -d 'Registry prefix for the images (`registry.example.com:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l uid -d 'The non-root uid the pods run as (the images\' own user is 1000)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l gid -d 'The gid the pods run as (and own their volumes with)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l volume-size -d 'Size requested for each folder\'s PersistentVolumeClaim' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l tfjob -d 'Also write multi-worker members as Kubeflow TFJobs'
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -l build -d 'Build the members\' images that are missing first (needs the Docker daemon)'
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand k8s" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -s o -l output -d 'With `--k8s`: the folder the manifests go to' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l registry -d 'With `--k8s`: registry prefix for the image (`registry.example.com:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l volume-size -d 'With `--k8s`: the size of the claim holding every trial\'s folder' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l dry-run -d 'Print the trials and the slot plan (the GPUs of each slot); create nothing'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -s d -l detach -d 'Run the sweep in the background and return (`tfimg sweep status` follows it)'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l json -d 'One JSON event per line on stdout instead of the live display (with `--dry-run`: the trials and slots as one JSON object)'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l resume -d 'Only go on with the sweep the file\'s journal records; never start a new one'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -l k8s -d 'Write the sweep as a Kubernetes Indexed Job (one completion per trial) into `-o DIR` instead of running it here'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -a "status" -d 'Where each trial of a sweep stands: queued, running, done, failed'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -a "results" -d 'The results table, sorted by the objective (best first)'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -a "stop" -d 'Stop a sweep: its trial containers are stopped and removed, every result is kept'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -a "report" -d 'Write one self-contained HTML report: the results table and charts'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and not __fish_seen_subcommand_from status results stop report help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from status" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from status" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from status" -l json -d 'Print JSON instead of a table'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from status" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from results" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from results" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from results" -l json -d 'Print JSON instead of a table'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from results" -l csv -d 'Print CSV instead of a table'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from results" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from results" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from results" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from stop" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from stop" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from stop" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from stop" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from report" -s o -l output -d 'The HTML file to write [default: report.html in the sweep\'s folder]' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from report" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from report" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from report" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from report" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from report" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from help" -f -a "status" -d 'Where each trial of a sweep stands: queued, running, done, failed'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from help" -f -a "results" -d 'The results table, sorted by the objective (best first)'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from help" -f -a "stop" -d 'Stop a sweep: its trial containers are stopped and removed, every result is kept'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from help" -f -a "report" -d 'Write one self-contained HTML report: the results table and charts'
complete -c tfimg -n "__fish_tfimg_using_subcommand sweep; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l model-config -d 'Serve the models of a TensorFlow Serving model config file instead (its `model_config_list`: names, absolute `base_path`s mounted read-only, version policies and labels); the server rereads it when it changes' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l name -d 'The model\'s name in the API\'s URLs [default: the folder\'s name]' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l gpus -d 'GPUs: `all`, a count, indices, UUIDs, or `none` [default: `gpu-serving` with every GPU no other tfimg container holds where the host can give them, else `cpu-serving`]' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -s p -l port -d 'The host port of the REST API (container port 8501) [default: 8501 when free]' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l grpc-port -d 'The host port of the gRPC API (container port 8500) [default: 8500 when free]' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l max-batch -d 'At most this many rows in one model call when concurrent requests are merged; 1 runs every request alone [default: 256]' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l memory -d 'The server\'s memory limit (`16g`) [default: 8g]' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l progress -r -f -a "auto\t'A live display on a terminal, plain lines otherwise'
plain\t'The daemon\'s output line by line (for CI logs)'
json\t'One JSON event per line on stdout'"
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l ca-cert -d 'A PEM file with extra CA certificates (a TLS-inspecting proxy\'s), trusted by apt, pip and curl during the build and inside the image' -r -F
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l pip-index-url -d 'pip\'s package index (PIP_INDEX_URL), e.g. a Nexus or devpi mirror of PyPI' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l apt-mirror -d 'An apt mirror replacing http://deb.debian.org/debian (or Ubuntu\'s archive)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l registry-mirror -d 'A registry mirroring Docker Hub, used to pull base images (`mirror.example:5000`)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l share-gpus -d 'Allow GPUs other tfimg containers hold (refused otherwise, naming who holds them)'
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l public -d 'Bind the ports on every interface (0.0.0.0) instead of 127.0.0.1'
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -s d -l detach -d 'Run in the background once the model answers'
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -l allow-reload-config -d 'Answer gRPC\'s `HandleReloadConfigRequest` (with `--model-config`), which replaces the model config in force. Its risk: anyone who reaches the gRPC port can then change the models served (an empty list unloads them all), as there is no login. Without it the call is refused (UNIMPLEMENTED)'
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tfimg -n "__fish_tfimg_using_subcommand serve" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand completions" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand completions" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand completions" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand completions" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand completions" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand man" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand man" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand man" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand man" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand man" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand prune-superseded" -s H -l host -d 'The Docker Engine to talk to: `ssh://[user@]host[:port]`, `tcp://host:port` or `unix:///path` (beats DOCKER_HOST and DOCKER_CONTEXT)' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand prune-superseded" -l context -d 'A Docker context (`docker context ls`) whose endpoint to talk to' -r
complete -c tfimg -n "__fish_tfimg_using_subcommand prune-superseded" -s v -l verbose -d 'More logging on stderr: -v for debug, -vv for trace (RUST_LOG overrides)'
complete -c tfimg -n "__fish_tfimg_using_subcommand prune-superseded" -s h -l help -d 'Print help'
complete -c tfimg -n "__fish_tfimg_using_subcommand prune-superseded" -s V -l version -d 'Print version'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "list" -d 'List the built-in and local specs with their TensorFlow, Python, CUDA and cuDNN'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "show" -d 'Print a spec fully resolved (defaults, versions, pins) as YAML'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "render" -d 'Print the Dockerfile a spec renders to, or write it with its context to a folder'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "build" -d 'Build a spec\'s image through the Docker API, verify it, and tag it'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "lock" -d 'Resolve a spec once and write SPEC.lock beside it (every pip distribution with its sha256, every apt package with its version), or check that the lock still fits'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "base" -d 'Base images without a registry'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "run" -d 'Start a container from a spec (built first when its image is missing or stale) or an image: GPUs, mounts, ports, Jupyter token, SSH key, the host user\'s uid/gid'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "ps" -d 'List tfimg\'s containers with their URLs and GPUs'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "logs" -d 'Print a container\'s output'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "exec" -d 'Run a command in a running container, as its user'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "stop" -d 'Stop containers (they can be started again with `docker start`)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "rm" -d 'Remove stopped containers (`-f` also running ones). Mounts and volumes stay'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "pull-files" -d 'Copy files out of a container (running or stopped) into a local folder: new and changed files only; nothing local is deleted'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "forward" -d 'Reach the ports of a detached container on a remote engine from this machine again: opens its ssh tunnel (or prints the open one\'s addresses); `--close` closes it'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "doctor" -d 'Check Docker, the NVIDIA driver and toolkit, and a spec against them, with fixes'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "up" -d 'Bring up every member of a team file (new and changed ones; unchanged stay)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "down" -d 'Remove a team\'s containers (never the data on their mounts)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "compose" -d 'Write a team as a Compose file (secrets in env files beside it)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "push" -d 'Push an image to a registry (so a cluster can pull it) and print it by digest'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "save" -d 'Write specs\' images (and the spec files and locks) and images into one bundle, to carry to a machine without a registry'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "load" -d 'Load a bundle from `tfimg save`: every part checked against its sha256 first, then the images into Docker and the specs into `./images`'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "k8s" -d 'Write a team as Kubernetes manifests (Deployments, Services, Secrets, claims, and indexed Jobs with TF_CONFIG for multi-worker training)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "sweep" -d 'Run a sweep file: many trials of one command over a grid, a seeded random search or a list of params, queued onto the GPUs (or CPU slots) of this host, resumable; or look at a sweep with `status`, `results`, `stop` and `report`'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "serve" -d 'Serve a SavedModel folder (numbered versions, `MODEL_DIR/1/saved_model.pb`), or the models of a model config file, over TensorFlow Serving\'s REST and gRPC APIs: waits until the models answer and prints a request to try; new versions copied into the folder are served without a restart'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "completions" -d 'Print the completion script for a shell (`tfimg completions bash > /etc/bash_completion.d/tfimg`; zsh: into a folder of `$fpath` as `_tfimg`)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "man" -d 'Print a man page: tfimg\'s, or a command\'s (`tfimg man run > tfimg-run.1`)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "prune-superseded" -d 'Internal: drop superseded builds of a spec (started by `build` in the background)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and not __fish_seen_subcommand_from list show render build lock base run ps logs exec stop rm pull-files forward doctor up down compose push save load k8s sweep serve completions man prune-superseded help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and __fish_seen_subcommand_from base" -f -a "bootstrap" -d 'Build a Debian or Ubuntu base image from an apt mirror with debootstrap and import it under REF (for machines where Docker Hub is unreachable)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and __fish_seen_subcommand_from sweep" -f -a "status" -d 'Where each trial of a sweep stands: queued, running, done, failed'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and __fish_seen_subcommand_from sweep" -f -a "results" -d 'The results table, sorted by the objective (best first)'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and __fish_seen_subcommand_from sweep" -f -a "stop" -d 'Stop a sweep: its trial containers are stopped and removed, every result is kept'
complete -c tfimg -n "__fish_tfimg_using_subcommand help; and __fish_seen_subcommand_from sweep" -f -a "report" -d 'Write one self-contained HTML report: the results table and charts'
