//! `tfimg up TEAM.yaml` and `tfimg down TEAM.yaml`: everyone's environment from one file.
//! `up` builds the images that are missing, then brings the team to what the file says
//! (the story is `app::team`: new and changed members through the one launcher, unchanged
//! ones left alone, dropped ones removed) and prints each member's access; a second `up`
//! with no change does nothing and says so. `down` removes the team's containers and
//! never the data on their mounts.

use std::process::ExitCode;

use crate::app::hub::HubAction;
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
        let hub_started = matches!(
            report.hub,
            Some(HubAction::Created | HubAction::Restarted)
        );
        if report.started.is_empty() && report.removed.is_empty() && !hub_started {
            errln!(
                "no change: the {} member(s) of `{}` are up to date",
                team.members.len(),
                team.name
            );
        }
        for member in &report.removed {
            errln!("removed `{member}` (no longer in the team file)");
        }
        let rows = up_down::access(session, &team, &report.actions).await?;
        print_team(&rows)?;
        if let (Some(gateway), Some(action)) = (&team.gateway, report.gateway) {
            errln!("gateway: {} ({action})", gateway.address());
        }
        if let (Some(hub), Some(action)) = (&team.hub, report.hub) {
            errln!("hub: {} ({action})", hub.login_url());
            if action == HubAction::Created {
                errln!(
                    "hint: members sign in there; give each one a first password with `tfimg hub passwd {} MEMBER` (she changes it at /hub/change-password)",
                    args.file.display()
                );
            }
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

/// `tfimg hub passwd TEAM_FILE MEMBER`: the password from the terminal (not echoed, asked
/// twice) or one line of stdin, set at the team's running hub.
pub fn hub_passwd(
    args: &HubPasswdArgs,
    settings: &Settings,
    host: &impl Host,
) -> anyhow::Result<ExitCode> {
    let (team, specs) = up_down::load(host, &super::catalog(settings, host), &args.file)?;
    crate::app::hub::check_member(&team, &specs, &args.member)?;
    let password = read_password(&args.member)?;
    crate::app::hub::check_password(&password)?;
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let session = super::session(&engine, host);
        crate::app::hub::passwd(session, &team, &args.member, password.as_bytes()).await?;
        errln!(
            "`{}` signs in at {} with it, then changes it at /hub/change-password",
            args.member,
            team.hub
                .as_ref()
                .map(|hub| hub.login_url())
                .unwrap_or_default()
        );
        Ok(ExitCode::SUCCESS)
    })
}

/// On a terminal: asked twice, never echoed. Otherwise the first line of stdin, without
/// its line end.
fn read_password(member: &str) -> anyhow::Result<String> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password(format!("password for `{member}`: "))?;
        let again = rpassword::prompt_password("again: ")?;
        if first != again {
            return Err(crate::input::InputError::new(
                "the two passwords differ",
                "run it again and type the same password twice",
            )
            .into());
        }
        return Ok(first);
    }
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// `tfimg hub gpus` (internal, run by a team's hub in its container): the request on
/// stdin, the GPUs granted on stdout, as JSON; a refusal (GPUs held by others) is the
/// error the member sees.
pub fn hub_gpus(settings: &Settings) -> anyhow::Result<ExitCode> {
    let mut text = String::new();
    use std::io::Read;
    std::io::stdin().take(1 << 20).read_to_string(&mut text)?;
    let ask: crate::app::hub::GpuAsk = serde_json::from_str(&text).map_err(|error| {
        crate::input::InputError::new(
            format!("`tfimg hub gpus` reads a JSON request on stdin: {error}"),
            "it is run by a team's hub, not by hand",
        )
    })?;
    super::runtime()?.block_on(async {
        let engine = settings.connect().await?;
        let grant = crate::app::hub::choose_gpus(&engine, &ask).await?;
        outln!("{}", serde_json::to_string(&grant)?);
        Ok(ExitCode::SUCCESS)
    })
}
