//! tfimg's TPE as a process, for bench/search/replay_tpe.py: it replays `tpe:` sweeps on
//! the recorded grids (bench/search/curves) to compare TPE + early stopping with Optuna's
//! over many seeds, without running a sweep per seed.
//!
//! `cargo run -p tfimg-core --example tpe_propose -- SWEEP_FILE`: the `tpe:` of the sweep
//! file; then one JSON request per input line, `{"index": N, "ended": [[PARAMS, VALUE],
//! ...], "pending": [PARAMS, ...], "taken": [PARAMS, ...]}` (PARAMS a JSON object, as the
//! journal writes them), each answered by a line with trial N's PARAMS, as `tfimg sweep`
//! proposes them (src/app/sweep/learn.rs).

use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::{json, Value};
use tfimg_core::sweep::search::Search;
use tfimg_core::sweep::value::{params_from_object, params_object};
use tfimg_core::sweep::Param;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = std::env::args()
        .nth(1)
        .ok_or("usage: tpe_propose SWEEP_FILE")?;
    let text = std::fs::read_to_string(&file)?;
    let sweep = tfimg_core::sweep::parse(&text, &file, Path::new("/"))
        .map_err(|error| error.to_string())?;
    let (Search::Tpe(tpe), Some(objective)) = (&sweep.search, &sweep.objective) else {
        return Err("the sweep file needs `tpe:` and `objective:`".into());
    };
    let names = sweep.param_names();
    let params = |value: &Value| -> Result<Vec<Param>, String> {
        value
            .as_object()
            .and_then(|object| params_from_object(&names, object))
            .ok_or_else(|| format!("not a param set of the sweep: {value}"))
    };
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let request: Value = serde_json::from_str(&line?)?;
        let list = |key: &str| request[key].as_array().cloned().unwrap_or_default();
        let ended = list("ended")
            .iter()
            .map(|told| Ok((params(&told[0])?, told[1].as_f64().unwrap_or(f64::NAN))))
            .collect::<Result<Vec<(Vec<Param>, f64)>, String>>()?;
        let pending = list("pending")
            .iter()
            .map(params)
            .collect::<Result<Vec<_>, _>>()?;
        let taken = list("taken")
            .iter()
            .map(params)
            .collect::<Result<Vec<_>, _>>()?;
        let index = request["index"].as_u64().ok_or("a request needs `index`")? as usize;
        let proposed = tpe.propose(
            index,
            objective.mode,
            &ended
                .iter()
                .map(|(params, value)| (params.as_slice(), *value))
                .collect::<Vec<_>>(),
            &pending.iter().map(Vec::as_slice).collect::<Vec<_>>(),
            &taken.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        );
        writeln!(out, "{}", json!(params_object(&proposed)))?;
        out.flush()?;
    }
    Ok(())
}
