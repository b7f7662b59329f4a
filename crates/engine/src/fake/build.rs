//! The fake engine's builds: the context is read and dropped, one step is reported, and
//! the image carries the build key the request's build argument holds (as the real
//! daemon's label does), unless the test scripted a failure.

use futures_util::StreamExt;

use super::FakeEngine;
use crate::{BuildEvent, BuildFailure, BuildRequest, Builds, EngineError, TarStream};
use tfimg_core::labels;

impl Builds for FakeEngine {
    async fn build(
        &self,
        request: &BuildRequest,
        context: impl TarStream,
        mut on_event: impl FnMut(&BuildEvent),
    ) -> Result<Result<String, BuildFailure>, EngineError> {
        let _ = context.collect::<Vec<_>>().await;
        on_event(&BuildEvent::Step {
            index: 1,
            total: 1,
            instruction: "FROM fake".to_string(),
        });
        let failure = {
            let mut state = self.state.borrow_mut();
            state.record("build".to_string());
            state.build_failure.take()
        };
        if let Some(failure) = failure {
            return Ok(Err(failure));
        }
        // The real daemon writes the build argument into the image's labels.
        let key = request
            .build_args
            .get(labels::BUILD_KEY_ARG)
            .cloned()
            .unwrap_or_default();
        Ok(Ok(self.add_image(&[], &[(labels::BUILD_KEY, key.as_str())])))
    }
}
