use super::*;
use crate::plan::batching::Batching;
use std::path::PathBuf;

fn parse_text(text: &str) -> Result<Team, SpecError> {
    parse(text, "team.yaml", PathBuf::from("/lab"))
}

#[test]
fn members_take_defaults() {
    let team = parse_text(
        "team: vision\ndefaults:\n  spec: cpu-jupyter\n  mounts_root: ./work\n  memory: 8g\nmembers:\n  - name: alice\n    gpus: [0]\n  - name: bob\n    spec: cpu-ssh\n    gpus: all\n",
    )
    .unwrap();
    assert_eq!(team.members[0].spec, "cpu-jupyter");
    assert_eq!(
        team.members[0].gpus,
        GpuSelection::Devices(vec!["0".into()])
    );
    assert_eq!(team.members[0].mounts, ["./work/alice:@WORKDIR@/work"]);
    assert_eq!(team.members[1].gpus, GpuSelection::All);
    assert_eq!(team.members[1].memory, Some(8 * 1024 * 1024 * 1024));
}

#[test]
fn clashes_name_both_members_and_the_line() {
    let error = parse_text(
        "team: vision\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n    gpus: [0, 1]\n  - name: bob\n    gpus: [1]\n",
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`team.yaml`:7:5: GPU 1 is given to both `alice` and `bob`"
    );
    let shared = "team: vision\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n    gpus: [0]\n    shared: true\n  - name: bob\n    gpus: [0]\n    shared: true\n";
    assert!(parse_text(shared).is_ok());
    let error = parse_text(
        "team: vision\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n    ports: {jupyter: 8890}\n  - name: bob\n    ports:\n      jupyter: 8890\n",
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`team.yaml`:7:5: host port 8890 is given to both `alice` (jupyter) and `bob` (jupyter)"
    );
    let error = parse_text(
        "team: vision\ndefaults: {spec: cpu-jupyter}\nmembers:\n  - name: alice\n  - name: alice\n",
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`team.yaml`:5:5: member `alice` is listed twice"
    );
}

#[test]
fn every_error_names_the_file() {
    // Found by `just fuzz`: members in flow style had no line to point at, and a
    // repetition-limit error no position, so these errors named no file. The bomb is
    // now found before serde_yaml expands it, on the member's field.
    let error =
        parse_text("team: lab\nmembers:\n  - {name: a, spec: x}\n  - {name: a}\n").unwrap_err();
    assert_eq!(
        error.to_string(),
        "`team.yaml`:2:1: member `a` is listed twice"
    );
    let mut levels = vec![String::from("&a0 [x, x, x, x, x, x, x, x, x]")];
    for level in 1..10 {
        let row = vec![format!("*a{}", level - 1); 9].join(", ");
        levels.push(format!("&a{level} [{row}]"));
    }
    let bomb = format!(
        "team: lab\nmembers:\n  - name: a\n    gpus: [{}]\n",
        levels.join(", ")
    );
    let error = parse_text(&bomb).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`team.yaml`:4:5: the anchors and aliases expand to too many values"
    );
    let error = parse_text("team: lab\nmembers:\n  - name: alice\n    port\ts: 1\n").unwrap_err();
    assert_eq!(
        error.to_string(),
        "`team.yaml`:4:5: members[0]: unknown field `port\\ts`, expected one of `name`, `spec`, `choices`, `gpus`, `shared`, `mounts`, `ports`, `env`, `command`, `memory`, `cpus`, `workers`, `model`, `model_name`, `model_config`, `max_batch`, `batching`"
    );
}

#[test]
fn members_are_checked_at_load_with_their_place() {
    let team = |rest: &str| {
        format!("team: lab\ndefaults:\n  spec: cpu-headless\nmembers:\n  - name: alice\n{rest}")
    };
    let error = |rest: &str| {
        let error = parse_text(&team(rest)).unwrap_err();
        (error.to_string(), error.hint)
    };
    assert_eq!(
        error("    memory: 99999999999999999999g\n"),
        (
            "`team.yaml`:6:5: member `alice`: `memory: 99999999999999999999g` is out of range"
                .into(),
            "sizes go from 4m to a few hundred g".into()
        )
    );
    assert_eq!(
        error("    cpus: lots\n").0,
        "`team.yaml`:6:5: member `alice`: `cpus: lots` is not a number"
    );
    assert_eq!(
        error("    mounts: [./data, \"./a:relative\"]\n").0,
        "`team.yaml`:6:5: member `alice`: `--mount ./a:relative`: the destination `relative` must be an absolute path inside the container"
    );
    assert_eq!(
        error("    mounts: [\"./a:/usr\"]\n").0,
        "`team.yaml`:6:5: member `alice`: `--mount ./a:/usr`: the destination `/usr` is a system folder of the image"
    );
    assert_eq!(
        error("    ports: {jupyter: 99999999999999999999}\n").0,
        "`team.yaml`:6:5: member `alice`: port 99999999999999999999 for `jupyter` is out of range"
    );
    assert_eq!(
        error("    gpus: -1\n").0,
        "`team.yaml`:6:5: members[0]: expected `gpus` to be `all`, `none`, a count, or a list of GPU indices and UUIDs"
    );
    let defaults =
        "team: lab\ndefaults:\n  spec: cpu-headless\n  shm_size: huge\nmembers:\n  - name: alice\n";
    let error = parse_text(defaults).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`team.yaml`:4:13: `shm_size: huge` is not a size"
    );
    assert_eq!(
        error.hint,
        "write sizes like `shm_size: 512m` or `shm_size: 8g` (b, k, m, g)"
    );
    let root = "team: lab\ndefaults:\n  spec: cpu-headless\n  mounts_root: \"a:b\"\nmembers:\n  - name: alice\n";
    assert_eq!(
        parse_text(root).unwrap_err().to_string(),
        "`team.yaml`:4:16: `mounts_root` for member `alice`: `--mount a:b/alice:/tf/work`: too many `:` parts"
    );
}

#[test]
fn spec_names_keep_their_place_and_names_are_shortened() {
    let team = parse_text(
        "team: lab\ndefaults:\n  spec: cpu-headless\nmembers:\n  - name: alice\n    spec: gpu-jupyterr\n  - name: bob\n",
    )
    .unwrap();
    let places: Vec<(usize, usize)> = team
        .members
        .iter()
        .map(|member| (member.spec_location.line, member.spec_location.column))
        .collect();
    assert_eq!(places, [(6, 5), (3, 9)]);
    let long = "a".repeat(100);
    let error = parse_text(&format!("team: lab\nmembers:\n  - name: {long}\n")).unwrap_err();
    assert_eq!(
        error.message,
        format!(
            "member name `{}…` is too long (100 characters, at most 40)",
            "a".repeat(64)
        )
    );
}

#[test]
fn names_fit_kubernetes_with_the_longest_suffix_tfimg_adds() {
    let message = |text: &str| parse_text(text).unwrap_err().to_string();
    let team = "t".repeat(90);
    assert_eq!(
        message(&format!("team: {team}\nmembers:\n  - name: a\n")),
        format!(
            "`team.yaml`:1:7: team name `{}…` is too long (90 characters, at most 53)",
            "t".repeat(64)
        )
    );
    assert_eq!(
        message("team: lab-\nmembers:\n  - name: a\n"),
        "`team.yaml`:1:7: team name `lab-` ends with `-`"
    );
    assert_eq!(
        message("team: lab\ndefaults: {spec: x}\nmembers:\n  - name: alice\n  - name: bob-\n"),
        "`team.yaml`:5:5: member name `bob-` ends with `-`"
    );
    // `<team>-<member>-workers` is the longest name: 55 + 8 = 63 fits, 64 does not.
    let team = "t".repeat(30);
    let fits = format!(
        "team: {team}\ndefaults: {{spec: x}}\nmembers:\n  - name: {}\n",
        "m".repeat(24)
    );
    assert_eq!(parse_text(&fits).unwrap().members[0].name.len(), 24);
    let error = parse_text(&format!(
        "team: {team}\nmembers:\n  - name: {}\n",
        "m".repeat(25)
    ))
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "`team.yaml`:3:5: member name `{m}` is too long for team `{team}`: `{team}-{m}` has 56 characters, at most 55",
            m = "m".repeat(25)
        )
    );
    assert!(
        error.hint.contains("at most 63 characters"),
        "{}",
        error.hint
    );
    assert_eq!(
        message("team: lab\ndefaults: {spec: x}\nmembers:\n  - name: a\n    workers: 100001\n    command: [python]\n"),
        "`team.yaml`:5:5: member `a`: `workers: 100001` is more than Kubernetes runs in one indexed Job (100000)"
    );
}

#[test]
fn broken_files_are_named_for_what_they_are() {
    let message = |text: &str| parse_text(text).unwrap_err().to_string();
    for empty in ["", "null\n", "# later\n", "---\n"] {
        assert_eq!(message(empty), "`team.yaml`:1:1: the team file is empty");
    }
    assert_eq!(
        message("team: lab\nteam: lab2\nmembers: [{name: a}]\n"),
        "`team.yaml`:2:1: duplicate field `team`"
    );
    assert_eq!(
        message("team: lab\nmembers: [{name: a, spec: x}]\n---\nteam: b\n"),
        "`team.yaml`:3:1: the file holds more than one YAML document"
    );
    assert_eq!(
        message("team: lab\nmembers:\n\t- name: alice\n"),
        "`team.yaml`:3:1: a tab indents this line; YAML indents with spaces only"
    );
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    assert_eq!(
        message(&format!(
            "team: lab\nmembers:\n  - name: a\n    gpus: {deep}\n"
        )),
        "`team.yaml`:4:136: the YAML nests too deeply (more than 128 levels)"
    );
    // What comes first in the file is reported first.
    assert_eq!(
        message(&format!(
            "teams: lab\nmembers:\n  - name: a\n    gpus: {deep}\n"
        )),
        "`team.yaml`:1:1: unknown field `teams`, expected one of `team`, `defaults`, `members`, `gateway`, `hub`, `idle`"
    );
}

/// A model server takes hostile request bytes: a serving member always has a memory
/// limit, its own `memory:` or the team's `defaults.memory` before the serving default.
#[test]
fn a_serving_member_has_a_memory_limit_unless_it_sets_its_own() {
    let team = parse_text(
        "team: lab\nmembers:\n  - name: fraud\n    spec: cpu-serving\n    model: ./export/fraud\n  - name: spam\n    spec: cpu-serving\n    model: ./export/spam\n    memory: 2g\n  - name: notebook\n    spec: cpu-jupyter\n",
    )
    .unwrap();
    let memory: Vec<_> = team.members.iter().map(|member| member.memory).collect();
    assert_eq!(
        memory,
        [
            Some(8 * 1024 * 1024 * 1024),
            Some(2 * 1024 * 1024 * 1024),
            None
        ]
    );
    let team = parse_text(
        "team: lab\ndefaults:\n  memory: 3g\nmembers:\n  - name: fraud\n    spec: cpu-serving\n    model: ./export/fraud\n",
    )
    .unwrap();
    assert_eq!(team.members[0].memory, Some(3 * 1024 * 1024 * 1024));
}

#[test]
fn a_serving_member_names_its_model_folder_and_maybe_the_model() {
    let team = parse_text(
        "team: lab\nmembers:\n  - name: fraud\n    spec: cpu-serving\n    model: ./export/./fraud/\n  - name: spam\n    spec: gpu-serving\n    model: /srv/models/spam\n    model_name: spam.v2\n",
    )
    .unwrap();
    let fraud = team.members[0].model.as_ref().unwrap();
    assert_eq!(fraud.folder, PathBuf::from("/lab/export/fraud"));
    assert_eq!(fraud.name, "fraud");
    assert_eq!(fraud.text, "./export/./fraud/");
    assert_eq!((fraud.location.line, fraud.location.column), (5, 5));
    let spam = team.members[1].model.as_ref().unwrap();
    assert_eq!(spam.folder, PathBuf::from("/srv/models/spam"));
    assert_eq!(spam.name, "spam.v2");

    let error = |member: &str| {
        parse_text(&format!(
            "team: lab\ndefaults: {{spec: cpu-serving}}\nmembers:\n  - name: bob\n{member}"
        ))
        .unwrap_err()
        .to_string()
    };
    assert_eq!(
        error("    model_name: spam\n"),
        "`team.yaml`:5:5: member `bob`: `model_name` without `model`"
    );
    assert_eq!(
        error("    model: ''\n"),
        "`team.yaml`:5:5: member `bob`: `model` is empty"
    );
    assert_eq!(
        error("    model: ./a:b\n"),
        "`team.yaml`:5:5: member `bob`: the model folder `./a:b` has a `:` or a control character"
    );
    assert_eq!(
        error("    command: [python, x.py]\n    model: ./export/fraud\n"),
        "`team.yaml`:6:5: member `bob`: `model` with a `command`"
    );
    assert_eq!(
        error("    model: ./export/fraud\n    model_name: -x\n"),
        "`team.yaml`:6:5: member `bob`: `model_name: -x` is not a valid model name"
    );
    assert_eq!(
        error("    model: ./export/my model\n"),
        "`team.yaml`:5:5: member `bob`: the folder name `my model` of `model` is not a valid model name"
    );
    assert_eq!(
        error("    model: /\n"),
        "`team.yaml`:5:5: member `bob`: the model folder `/` has no name"
    );
    assert_eq!(
        error("    model: ./export/fraud\n    env:\n      TFIMG_SERVING_MAX_BATCH: 1\n"),
        "`team.yaml`:7:7: member `bob`: `TFIMG_SERVING_MAX_BATCH`: `TFIMG_*` variables are set by tfimg"
    );
    assert_eq!(
        error("    max_batch: 8\n"),
        "`team.yaml`:5:5: member `bob`: `max_batch` without `model`"
    );
    assert_eq!(
        error("    model: ./export/fraud\n    max_batch: 0\n"),
        "`team.yaml`:6:5: member `bob`: `max_batch: 0` is not a number of rows"
    );
    assert!(
        error("    model: ./export/fraud\n    max_batch: -4\n").starts_with("`team.yaml`:6:16: "),
        "{}",
        error("    model: ./export/fraud\n    max_batch: -4\n")
    );
    let capped = parse_text(
        "team: lab\nmembers:\n  - name: fraud\n    spec: cpu-serving\n    model: ./export/fraud\n    max_batch: 64\n",
    )
    .unwrap();
    assert_eq!(
        capped.members[0].model.as_ref().unwrap().max_batch,
        Some(64)
    );
    assert_eq!(fraud.max_batch, None);
}

#[test]
fn a_serving_member_s_batching_is_true_or_a_file_and_never_beside_max_batch() {
    let member = |extra: &str| {
        parse_text(&format!(
            "team: lab\nmembers:\n  - name: fraud\n    spec: cpu-serving\n    model: ./export/fraud\n{extra}"
        ))
        .map(|team| team.members[0].model.clone().unwrap())
    };
    let defaults = member("    batching: true\n").unwrap();
    assert_eq!(defaults.batching, Some(Batching::default()));
    assert_eq!(defaults.batching_file, None);
    let off = member("    batching: false\n").unwrap();
    assert_eq!((off.batching, off.batching_file), (None, None));
    let file = member("    batching: ./serving/batching.config\n").unwrap();
    assert_eq!(file.batching, None, "read by the use case, not here");
    assert_eq!(
        file.batching_file,
        Some((
            PathBuf::from("/lab/serving/batching.config"),
            "./serving/batching.config".to_string()
        ))
    );
    let error = |extra: &str| member(extra).unwrap_err().to_string();
    assert_eq!(
        error("    batching: true\n    max_batch: 8\n"),
        "`team.yaml`:6:5: member `fraud`: `batching` with `max_batch`"
    );
    assert_eq!(
        error("    batching: \"a:b\"\n"),
        "`team.yaml`:6:5: member `fraud`: `batching: a:b` is not a file name tfimg reads"
    );
    assert!(
        error("    batching: [1]\n").contains("expected `batching` to be `true`"),
        "{}",
        error("    batching: [1]\n")
    );
    let bare = parse_text(
        "team: lab\nmembers:\n  - name: bob\n    spec: cpu-serving\n    batching: true\n",
    )
    .unwrap_err();
    assert_eq!(
        bare.to_string(),
        "`team.yaml`:5:5: member `bob`: `batching` without `model`"
    );
    // A member with a model config file batches the same way.
    let configured = parse_text(
        "team: lab\nmembers:\n  - name: many\n    spec: cpu-serving\n    model_config: ./models.config\n    batching: true\n",
    )
    .unwrap();
    let model = configured.members[0].model.as_ref().unwrap();
    assert_eq!(model.batching, Some(Batching::default()));
}

#[test]
fn a_mistyped_key_is_answered_with_the_one_meant() {
    let error = parse_text(
        "team: lab\ndefaults:\n  spec: cpu-jupyter\n  mount_root: ./work\nmembers:\n  - name: a\n",
    )
    .unwrap_err();
    assert!(
        error
            .message
            .starts_with("defaults: unknown field `mount_root`"),
        "{}",
        error.message
    );
    assert_eq!(error.hint, "did you mean `mounts_root`?");
}

#[test]
fn idle_kernels_is_a_duration_said_at_its_line() {
    let members = "members:\n  - name: alice\n    spec: cpu-jupyter\n";
    let team = parse_text(&format!("team: lab\nidle: {{kernels: 1h}}\n{members}")).unwrap();
    assert_eq!(team.idle_kernels, Some(3600));
    assert_eq!(
        parse_text(&format!("team: lab\n{members}"))
            .unwrap()
            .idle_kernels,
        None
    );
    let error = parse_text(&format!("team: lab\nidle:\n  kernels: 5s\n{members}")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("`team.yaml`:3:12: `kernels: 5s` must be whole seconds"),
        "{error}"
    );
    let both = parse_text(&format!(
        "team: lab\nidle: {{kernels: 1h, containers: 12h}}\n{members}"
    ))
    .unwrap();
    assert_eq!(
        (both.idle_kernels, both.idle_containers),
        (Some(3600), Some(12 * 3600))
    );
    let error =
        parse_text(&format!("team: lab\nidle:\n  containers: soon\n{members}")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("`team.yaml`:3:15: `containers: soon` is not a duration"),
        "{error}"
    );
    // A key it does not know is refused, not silently ignored.
    let unknown = parse_text(&format!("team: lab\nidle: {{gpus: 12h}}\n{members}")).unwrap_err();
    assert!(
        unknown.to_string().contains("unknown field `gpus`"),
        "{unknown}"
    );
}
