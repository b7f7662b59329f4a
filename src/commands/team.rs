//! `tfimg up TEAM.yaml` and `tfimg down TEAM.yaml`: everyone's environment from one file.
//! `up` builds the images that are missing, then brings the team to what the file says
//! (the story is `app::team`: new and changed members through the one launcher, unchanged
//! ones left alone, dropped ones removed) and prints each member's access; a second `up`
//! with no change does nothing and says so. `down` removes the team's containers and
//! never the data on their mounts.

use std::collections::BTreeMap;
use std::process::ExitCode;

use crate::app::build::{build_spec, BuildOptions, Network};
use crate::app::settings::Settings;
use crate::app::team::{self as reconcile, Action, TeamImages};
use crate::cli::TeamArgs;
use crate::engine::prelude::*;
use crate::engine::Engine;
use crate::host::Host;
use crate::labels;
use crate::output::exit::EXIT_ENGINE;
use crate::output::progress::Reporter;
use crate::plan;
use crate::spec::{self, ResolvedSpec};
use crate::team::Team;

/// The team file and every member's resolved spec (errors name the member), with serving
/// members' model folders checked.
pub(crate) fn team_and_specs(
    host: &impl Host,
    file: &std::path::Path,
) -> anyhow::Result<(Team, BTreeMap<String, ResolvedSpec>)> {
    let team = crate::app::catalog::load_team(file)?;
    let catalog = super::catalog();
    let mut specs: BTreeMap<String, ResolvedSpec> = BTreeMap::new();
    for member in &team.members {
        if !specs.contains_key(&member.spec) {
            let resolved =
                crate::app::catalog::resolve(&catalog, &member.spec).map_err(|error| {
                    spec::SpecError::new(
                        // `no spec named ...` has no place of its own: the member's `spec:`.
                        error
                            .location
                            .clone()
                            .or_else(|| Some(member.spec_location.clone())),
                        format!("member `{}`: {}", member.name, error.message),
                        error.hint.clone(),
                    )
                })?;
            specs.insert(member.spec.clone(), resolved);
        }
    }
    // Serving members' models, before anything is built or created.
    reconcile::check_models(host, &team, &specs)?;
    Ok((team, specs))
}

/// The current image of every spec, built (and verified) when missing.
pub(crate) async fn images_for(
    engine: &impl Engine,
    host: &impl Host,
    specs: &BTreeMap<String, ResolvedSpec>,
    network: &Network,
    reporter: &Reporter,
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut images = BTreeMap::new();
    for (name, resolved) in specs {
        let built = build_spec(
            engine,
            host,
            resolved,
            network,
            &BuildOptions::default(),
            reporter,
        )
        .await?
        .expect("a real build always answers");
        images.insert(name.clone(), built.plan.keyed_tag);
    }
    reporter.clear();
    Ok(images)
}

pub fn up(args: &TeamArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let (team, specs) = team_and_specs(host, &args.file)?;
    let network = settings.network(&args.network.choices(), host)?;
    let chosen = host.container_ids();
    let ids = chosen.ids;
    let reporter = Reporter::new(args.progress);
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        // Before any build: members' mounts name folders of this machine.
        reconcile::check_mounts_are_local(&team, engine.remote_endpoint())?;
        reconcile::check_member_folders(host, &team)?;
        crate::app::gateway::check_local(&team, engine.remote_endpoint())?;
        let images = TeamImages {
            specs: images_for(&engine, host, &specs, &network, &reporter).await?,
            gateway: match team.gateway {
                Some(_) => crate::app::gateway::image(&engine, &network, false, &reporter).await?,
                None => None,
            },
        };
        reporter.clear();
        if team.members.iter().any(|member| !member.mounts.is_empty()) {
            super::say(chosen.note);
        }
        let report =
            reconcile::up(&engine, host, &team, &specs, &images, ids, args.rollback).await?;
        for note in &report.notes {
            eprintln!("{note}");
        }
        // Members replaced or rolled back leave tunnels behind on a remote engine.
        crate::app::tunnels::tidy(&engine, host).await?;
        if !report.failures.is_empty() {
            for (member, error) in &report.failures {
                eprintln!("error: member `{member}` did not start: {error:#}");
            }
            if args.rollback {
                eprintln!(
                    "rolled back: removed the {} member(s) this `up` started",
                    report.rolled_back
                );
            } else {
                eprintln!("hint: the other members are up; fix the failing ones and run `up` again, or `up --rollback` to undo a partial start");
            }
            return Ok(ExitCode::from(EXIT_ENGINE));
        }
        if report.started.is_empty() && report.removed.is_empty() {
            eprintln!(
                "no change: the {} member(s) of `{}` are up to date",
                team.members.len(),
                team.name
            );
        }
        for member in &report.removed {
            eprintln!("removed `{member}` (no longer in the team file)");
        }
        print_team(&engine, host, &team, &report.actions).await?;
        if let (Some(gateway), Some(action)) = (&team.gateway, report.gateway) {
            eprintln!("gateway: {} ({action})", gateway.address());
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn down(args: &TeamArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let team = crate::app::catalog::load_team(&args.file)?;
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let containers = engine
            .containers_with_label(&labels::team_filter(&team.name))
            .await?;
        for container in &containers {
            engine.remove_container(&container.id, true).await?;
            crate::app::tunnels::close(&engine, host, &container.id).await;
            println!("{}", container.name);
        }
        if containers.is_empty() {
            eprintln!("`{}` has no containers", team.name);
        }
        // The team's networks go with its last container (a team without a gateway has none).
        crate::app::gateway::remove_networks(&engine, &team.name).await?;
        Ok(ExitCode::SUCCESS)
    })
}

async fn print_team(
    engine: &impl Engine,
    host: &impl Host,
    team: &Team,
    actions: &BTreeMap<String, Action>,
) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for member in &team.members {
        let name = format!("{}-{}", team.name, member.name);
        let container = engine.container(&name).await?;
        // The labels have no token; the user who ran `up` gets the whole URL. On a remote
        // engine a running member's tunnel is opened again if it was closed.
        let endpoints = match &container {
            Some(found)
                if engine.tunnels_ports()
                    && found.state == "running"
                    && found.labels.contains_key(crate::labels::PORTS) =>
            {
                crate::app::tunnels::reopen(engine, host, found).await?
            }
            Some(found) => plan::tunnels::container_endpoints(
                &found.labels,
                crate::labels::jupyter_token(&found.env).as_deref(),
                &[],
            ),
            None => Vec::new(),
        };
        let (service, tensorboard) = plan::access(&endpoints);
        let access = service.map(str::to_string).unwrap_or_else(|| {
            match container.as_ref().map(|c| c.state.as_str()) {
                Some("exited") => format!(
                    "exited ({})",
                    container.as_ref().and_then(|c| c.exit_code).unwrap_or(0)
                ),
                Some(state) => state.to_string(),
                None => "-".to_string(),
            }
        });
        let tensorboard = tensorboard.unwrap_or("-").to_string();
        let action = match actions.get(&member.name) {
            Some(Action::Created) => "created",
            Some(Action::Recreated) => "recreated",
            _ => "unchanged",
        };
        rows.push(vec![
            member.name.clone(),
            member.spec.clone(),
            action.to_string(),
            member.gpus.describe(),
            access,
            tensorboard,
        ]);
    }
    let mut header = vec!["MEMBER", "SPEC", "UP", "GPUS", "ACCESS", "TENSORBOARD"];
    if rows.iter().all(|row| row[5] == "-") {
        header.pop();
        rows.iter_mut().for_each(|row| {
            row.pop();
        });
    }
    crate::output::print_table(&header, &rows)?;
    Ok(())
}
