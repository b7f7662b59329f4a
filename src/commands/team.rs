//! `tfimg up TEAM.yaml` and `tfimg down TEAM.yaml`: everyone's environment from one file.
//! `up` builds the images that are missing, then brings the team to what the file says
//! (the story is `app::team`: new and changed members through the one launcher, unchanged
//! ones left alone, dropped ones removed) and prints each member's access; a second `up`
//! with no change does nothing and says so. `down` removes the team's containers and
//! never the data on their mounts.

use std::process::ExitCode;

type Result = anyhow::Result<ExitCode>;

use crate::app::settings::Settings;
use crate::app::team::up_down;
use crate::cli::{DownArgs, HubPasswdArgs, TeamArgs};
use crate::host::Host;
use crate::output::exit::EXIT_ENGINE;
use crate::output::progress::Reporter;

pub fn up(args: &TeamArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let (team, specs) = up_down::load(host, &super::catalog(settings, host), &args.file)?;
    let network = settings.network(&args.network.choices(), host)?;
    let reporter = Reporter::new(args.progress);
    super::runtime_handling_interrupts()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::reported(&engine, host, &reporter);
        let rollback = args.rollback_choice();
        let report =
            up_down::bring_up(session, &team, &specs, &network, rollback)
                .await?;
        if !report.failures.is_empty() {
            for (member, error) in &report.failures {
                errln!("error: member `{member}` did not start: {error:#}");
            }
            if report.rollback {
                errln!(
                    "rolled back: removed the {} member(s) this `up` started",
                    report.rolled_back
                );
                errln!("hint: fix the failing member(s) and run `up` again (`up --no-rollback` keeps the members that came up)");
            } else {
                errln!("hint: the other members are up; fix the failing ones and run `up` again, or `up --rollback` to undo a partial start");
            }
            return Ok(ExitCode::from(EXIT_ENGINE));
        }
        for line in report.changes(&team) {
            errln!("{line}");
        }
        let rows = up_down::access(session, &team, &report.actions).await?;
        print_team(&rows)?;
        for line in report.front_door(&team) {
            errln!("{line}");
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn down(args: &DownArgs, settings: &Settings, host: &impl Host) -> anyhow::Result<ExitCode> {
    let team = crate::app::catalog::load_team(host, &args.file)?;
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        let removed = up_down::down(session, &team.name).await?;
        for name in &removed {
            outln!("{name}");
        }
        if removed.is_empty() {
            errln!("`{}` has no containers", team.name);
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The members' table; the TENSORBOARD column only when a member has one.
fn print_team(rows: &[up_down::MemberAccess]) -> anyhow::Result<()> {
    let mut header = vec!["MEMBER", "SPEC", "UP", "GPUS", "ACCESS", "TENSORBOARD"];
    let mut rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            vec![
                row.member.clone(),
                row.spec.clone(),
                row.action.to_string(),
                row.gpus.clone(),
                row.access.clone(),
                row.tensorboard.clone(),
            ]
        })
        .collect();
    if rows.iter().all(|row| row[5] == "-") {
        header.pop();
        rows.iter_mut().for_each(|row| {
            row.pop();
        });
    }
    crate::output::print_table(&header, &rows)?;
    Ok(())
}

/// `tfimg hub passwd TEAM_FILE MEMBER`: the password (`output::prompt`) set at the hub.
pub fn hub_passwd(args: &HubPasswdArgs, settings: &Settings, host: &impl Host) -> Result {
    let (team, specs) = up_down::load(host, &super::catalog(settings, host), &args.file)?;
    crate::app::hub::check_member(&team, &specs, &args.member)?;
    let password = crate::output::prompt::password(&args.member)?;
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let said = crate::app::hub::passwd(&engine, &team, &args.member, &password).await?;
        errln!("{said}");
        Ok(ExitCode::SUCCESS)
    })
}

/// `tfimg hub gpus` (run by a team's hub): a JSON request on stdin, the grant on stdout.
pub fn hub_gpus(settings: &Settings) -> Result {
    let ask = crate::output::prompt::stdin_text(1 << 20)?;
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        outln!(
            "{}",
            crate::app::hub::choose_gpus_json(&engine, &ask).await?
        );
        Ok(ExitCode::SUCCESS)
    })
}
