//! Lock files that serialise builds: one per build key (a concurrent build of the same
//! image waits, then finds it up to date), and the images lock builds hold shared while
//! the pruning of superseded images holds it exclusively.

use std::time::Duration;

use crate::app::Interrupted;
use crate::host::prelude::{Clock, State};
use crate::host::LockAttempt;
use crate::output::progress::Report;

/// Builds hold this shared and the pruning of superseded images holds it exclusively:
/// the daemon's cache lookup fails ("unable to find image") when an image it is looking
/// at is deleted under it, so tfimg never deletes images while one of its builds runs.
pub const IMAGES_LOCK: &str = "images.lock";

/// Takes the lock file `name`, waiting (and saying so once) while another tfimg holds
/// it; `None` when locks are impossible here (the work then runs unserialised).
pub async fn lock(
    host: &(impl Clock + State),
    name: &str,
    shared: bool,
    waiting: &str,
    reporter: &(impl Report + ?Sized),
) -> anyhow::Result<Option<Box<dyn std::any::Any + Send>>> {
    let interrupted = host.interrupted();
    tokio::pin!(interrupted);
    let mut announced = false;
    loop {
        match host.try_lock(name, shared) {
            LockAttempt::Held(lock) => return Ok(Some(lock)),
            LockAttempt::Unavailable => return Ok(None),
            LockAttempt::Busy => {
                if !announced {
                    reporter.status(waiting);
                    announced = true;
                }
                tokio::select! {
                    _ = host.sleep(Duration::from_millis(100)) => {}
                    _ = &mut interrupted => {
                        return Err(Interrupted {
                            what: format!("stopped while {waiting}"),
                        }
                        .into())
                    }
                }
            }
        }
    }
}
