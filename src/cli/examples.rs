//! The examples at the end of the main commands' `--help` (and their man pages). Each is a
//! command line that works as written (`cli/tests.rs` parses every one); most are the
//! ones the guide runs. `$USER-lab`: on a server many people share, a name of your own.

pub const RUN: &str = "\
Examples:
  # JupyterLab in the background, under a name of your own; prints its address
  $ tfimg run cpu-jupyter -d --name \"$USER-lab\"
  # One command in TensorFlow's image, with ./code mounted read-only
  $ tfimg run cpu-headless --mount ./code:ro -- python code/train.py
  # Two GPUs by index, with your notebooks
  $ tfimg run gpu-jupyter --gpus 0,1 --mount ./notebooks
  # An SSH box on a port you pick
  $ tfimg run cpu-ssh -d --name \"$USER-box\" -p 2222:22 --mount ./code";

pub const BUILD: &str = "\
Examples:
  $ tfimg build cpu-jupyter
  # A spec file of your own, with an extra tag
  $ tfimg build ./images/lab.yaml --tag team/lab:1
  # Behind a TLS-inspecting proxy: its CA for apt, pip and curl
  $ tfimg build gpu-jupyter --ca-cert /etc/ssl/certs/ca-certificates.crt";

pub const SHOW: &str = "\
Examples:
  $ tfimg show cpu-jupyter
  $ tfimg show ./images/lab.yaml";

pub const DOCTOR: &str = "\
Examples:
  # Docker, the NVIDIA driver and toolkit, and gpu-jupyter against them
  $ tfimg doctor
  $ tfimg doctor tf218-gpu-jupyter
  $ tfimg doctor cpu-headless --json";

pub const PS: &str = "\
Examples:
  $ tfimg ps
  # Per GPU: who holds it and what it uses, every 2 seconds
  $ tfimg ps --gpus --watch
  $ tfimg ps --team vision --json";

pub const STOP: &str = "\
Examples:
  $ tfimg stop \"$USER-lab\"
  # Several at once (`docker start NAME` starts one again)
  $ tfimg stop \"$USER-lab\" \"$USER-box\"";

pub const RM: &str = "\
Examples:
  $ tfimg rm \"$USER-lab\"
  # Running ones too (stopped first); their mounted folders stay
  $ tfimg rm -f \"$USER-lab\" \"$USER-box\"";

pub const LOGS: &str = "\
Examples:
  $ tfimg logs \"$USER-lab\"
  $ tfimg logs -f --tail 20 \"$USER-lab\"";

pub const EXEC: &str = "\
Examples:
  $ tfimg exec \"$USER-lab\" -- pip list
  $ tfimg exec \"$USER-lab\" -- python -c \"import tensorflow as tf; print(tf.__version__)\"";

pub const UP: &str = "\
Examples:
  # Every member of the team file (docs/lab.md has one to copy)
  $ tfimg up team.yaml
  # Again after editing it: new and changed members only; members' images built
  # behind a TLS-inspecting proxy get its CA
  $ tfimg up team.yaml --ca-cert /etc/ssl/certs/ca-certificates.crt";

pub const DOWN: &str = "\
Examples:
  # The team's containers go; the folders they mounted stay
  $ tfimg down team.yaml
  $ tfimg down ~/teams/vision.yaml";

pub const HUB_PASSWD: &str = "\
Examples:
  # Asked for twice on the terminal, never echoed
  $ tfimg hub passwd lab.yaml alice
  # Not on a terminal (a pipe, `< first-password.txt`): the first line of stdin
  $ tfimg hub passwd ~/teams/vision.yaml bob";

pub const SWEEP: &str = "\
Examples:
  # The trials and the slot of each; nothing is created
  $ tfimg sweep examples/sweep/quick.yaml --dry-run
  $ tfimg sweep examples/sweep/quick.yaml
  # From another terminal, or after it ended
  $ tfimg sweep status quick
  $ tfimg sweep results quick --csv
  $ tfimg sweep report quick";

pub const SERVE: &str = "\
Examples:
  # Numbered versions in ./export/fraud (./export/fraud/1/saved_model.pb)
  $ tfimg serve ./export/fraud -d
  # Your own name in the URLs and a port you pick
  $ tfimg serve ./export/fraud --name \"$USER-fraud\" -p 8601 -d
  $ tfimg serve --model-config models.config";
