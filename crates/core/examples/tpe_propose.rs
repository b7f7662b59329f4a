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
use tfimg_core::sweep::value::params_object;
use tfimg_core::sweep::{Param, ParamValue};

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
    let params = |value: &Value| -> Vec<Param> {
        tpe.params
            .iter()
            .filter_map(|(name, _)| {
                let value = ParamValue::from_json(value.get(name)?)?;
                Some((name.clone(), value))
            })
            .collect()
    };
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let request: Value = serde_json::from_str(&line?)?;
        let list = |key: &str| request[key].as_array().cloned().unwrap_or_default();
        let ended: Vec<(Vec<Param>, f64)> = list("ended")
            .iter()
            .map(|told| (params(&told[0]), told[1].as_f64().unwrap_or(f64::NAN)))
            .collect();
        let pending: Vec<Vec<Param>> = list("pending").iter().map(params).collect();
        let taken: Vec<Vec<Param>> = list("taken").iter().map(params).collect();
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
