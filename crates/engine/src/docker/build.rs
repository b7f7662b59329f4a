//! Image builds through the classic builder (Engine 20.10 has no BuildKit session for
//! API clients): the context streams in as a tar, progress streams out as events, and the
//! result is the new image's id. The build is never tagged here: the caller tags only
//! after verification, so a failed build or verification leaves no tag behind.

use bollard::query_parameters::BuildImageOptions;
use futures_util::StreamExt;

use super::Docker;
use crate::{BuildEvent, BuildFailure, BuildRequest, Builds, EngineError, TarStream};

/// Lines of a failing step kept for the error report.
const FAILURE_LINES: usize = 25;

impl Builds for Docker {
    /// Builds the context; `on_event` sees every step and output line as it arrives.
    /// `Ok(Err(failure))` is a build that ran and failed (bad input, exit 1);
    /// `Err(..)` is the engine failing (exit 2).
    async fn build(
        &self,
        request: &BuildRequest,
        context: impl TarStream,
        mut on_event: impl FnMut(&BuildEvent),
    ) -> Result<Result<String, BuildFailure>, EngineError> {
        let options = BuildImageOptions {
            dockerfile: "Dockerfile".to_string(),
            rm: true,
            forcerm: true,
            nocache: request.no_cache,
            buildargs: Some(request.build_args.clone()),
            ..Default::default()
        };
        let body = bollard::body_try_stream(context);
        let mut stream = self.client.build_image(options, None, Some(body));
        let mut progress = Progress::default();
        while let Some(item) = stream.next().await {
            let info = match item {
                Ok(info) => info,
                Err(bollard::errors::Error::DockerStreamError { error }) => {
                    flush_line(&mut progress.pending, &mut progress.output, &mut on_event);
                    return Ok(Err(progress.failure(error.trim())));
                }
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code,
                    message,
                }) if (400..500).contains(&status_code) => {
                    return Ok(Err(progress.failure(&message)));
                }
                Err(error) => return Err(self.fail("build", error)),
            };
            if let Some(aux) = info.aux.and_then(|aux| aux.id) {
                progress.image_id = Some(aux);
            }
            if let Some(text) = info.stream {
                progress.read(&text, &mut on_event);
            }
        }
        flush_line(&mut progress.pending, &mut progress.output, &mut on_event);
        match progress.image_id.clone() {
            Some(id) => Ok(Ok(id)),
            None => Ok(Err(
                progress.failure("the daemon ended the build without an image")
            )),
        }
    }
}

/// What a build has said so far.
#[derive(Default)]
struct Progress {
    /// The step running now (`Step 7/18 : RUN ...`).
    step: Option<(usize, usize, String)>,
    /// The current step's last lines of output.
    output: Vec<String>,
    image_id: Option<String>,
    /// The part of the stream after its last newline.
    pending: String,
}

impl Progress {
    /// Takes in a piece of the build's text stream, line by line.
    fn read(&mut self, text: &str, on_event: &mut impl FnMut(&BuildEvent)) {
        self.pending.push_str(text);
        while let Some(newline) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=newline).collect();
            let line = strip_ansi(line.trim_end_matches(['\n', '\r']));
            if let Some(parsed) = parse_step(&line) {
                self.output.clear();
                self.step = Some(parsed.clone());
                on_event(&BuildEvent::Step {
                    index: parsed.0,
                    total: parsed.1,
                    instruction: parsed.2,
                });
            } else if let Some(id) = line.trim().strip_prefix("---> Running in ") {
                on_event(&BuildEvent::Container(id.trim().to_string()));
            } else if let Some(id) = line.strip_prefix("Successfully built ") {
                self.image_id.get_or_insert_with(|| id.trim().to_string());
            } else if !is_builder_noise(&line) {
                push_output(&mut self.output, &line);
                on_event(&BuildEvent::Output(line));
            }
        }
    }

    /// The build failed with `message` at the step (and output) seen last.
    fn failure(&self, message: &str) -> BuildFailure {
        BuildFailure {
            step: self.step.clone(),
            message: message.to_string(),
            output: self.output.clone(),
        }
    }
}

fn flush_line(
    pending: &mut String,
    output: &mut Vec<String>,
    on_event: &mut impl FnMut(&BuildEvent),
) {
    let rest = std::mem::take(pending);
    let rest = rest.trim_end();
    if !rest.is_empty() {
        push_output(output, rest);
        on_event(&BuildEvent::Output(rest.to_string()));
    }
}

fn push_output(output: &mut Vec<String>, line: &str) {
    if output.len() == FAILURE_LINES {
        output.remove(0);
    }
    output.push(line.to_string());
}

/// The classic builder paints a step's stderr red (`ESC[91m`); users and logs want text.
fn strip_ansi(line: &str) -> String {
    let mut text = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                // Parameters and intermediates, up to the final byte (@ to ~).
                for next in chars.by_ref() {
                    if ('@'..='~').contains(&next) {
                        break;
                    }
                }
            }
            continue;
        }
        text.push(c);
    }
    text
}

/// The classic builder's bookkeeping lines, which say nothing to a user.
fn is_builder_noise(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty()
        || trimmed.starts_with("---> ")
        || trimmed.starts_with("Removing intermediate container")
        || trimmed.starts_with("Successfully tagged")
}

/// `Step 3/18 : RUN apt-get update` → (3, 18, `RUN apt-get update`).
fn parse_step(line: &str) -> Option<(usize, usize, String)> {
    let rest = line.strip_prefix("Step ")?;
    let (counts, instruction) = rest.split_once(" : ")?;
    let (index, total) = counts.split_once('/')?;
    Some((
        index.parse().ok()?,
        total.parse().ok()?,
        instruction.to_string(),
    ))
}

#[cfg(test)]
mod tests;
