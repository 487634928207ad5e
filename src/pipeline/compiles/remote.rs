//! Trace logs on a server, read there by its agent: the models they are joined to are the
//! agent's own tree's, so neither the log nor the model graphs cross the link, only the story.

use super::{Story, read_stories, unread};
use crate::model::index::DebugIndex;
use crate::pipeline::remote::{self, Op};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// The stories of trace logs, joined to the models of the tree at `root`.
pub struct Stories;

#[derive(Serialize, Deserialize)]
pub struct Logs {
    traces: Vec<PathBuf>,
    root: Option<PathBuf>,
}

impl Op for Stories {
    const NAME: &'static str = "stories";
    type Args = Logs;
    type Item = Story;

    fn paths(logs: &mut Logs) -> Vec<&mut PathBuf> {
        logs.traces.iter_mut().chain(logs.root.as_mut()).collect()
    }

    fn item_paths(story: &mut Story) -> Vec<&mut PathBuf> {
        vec![&mut story.path]
    }

    fn run(logs: Logs, _stop: &AtomicBool, send: &(dyn Fn(Story) + Sync)) {
        let index = logs
            .root
            .and_then(|r| crate::pipeline::tree::index(&r).ok());
        for t in logs.traces {
            for story in read_stories(&[t], index.as_ref()) {
                send(story);
            }
        }
    }
}

/// The stories of `traces` when they all lie on one server, read by its agent; `None` for
/// local logs.
pub(super) fn read(traces: &[PathBuf], index: Option<&DebugIndex>) -> Option<Vec<Story>> {
    let first = traces.first()?;
    let logs = Logs {
        traces: traces.to_vec(),
        // A tree elsewhere than the logs is not the agent's to join: the logs alone are asked.
        root: index
            .map(|i| i.root.clone())
            .filter(|r| remote::same_server(r, first).is_some()),
    };
    let mut stories = Vec::new();
    let done = remote::there::<Stories>(logs, &AtomicBool::new(false), |story| {
        stories.push(story);
        Ok(())
    })?;
    if let Err(e) = done {
        let why = e.to_string();
        stories.extend(
            traces[stories.len().min(traces.len())..]
                .iter()
                .map(|t| unread(t, why.clone())),
        );
    }
    Some(stories)
}
