//! Trace logs on a server, read there by its agent: the models they are joined to are the
//! agent's own tree's, so neither the log nor the model graphs cross the link, only the story.

use super::{Story, read_stories, unread};
use crate::model::index::DebugIndex;
use crate::sources::load;
use crate::sources::remote::fs as remote;
use crate::sources::remote::proto::Request;
use crate::sources::remote::{target, wire};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// What the agent does for `Request::Stories`: reads each log of `traces` (the server's paths)
/// joined to the models of the tree at `root`, and sends each story as an item.
pub fn serve(traces: Vec<String>, root: Option<String>, send: &dyn Fn(Vec<u8>)) {
    let index = root.and_then(|r| load::index(Path::new(&r)).ok());
    for t in traces {
        for story in read_stories(&[PathBuf::from(t)], index.as_ref()) {
            // Serialising plain data into a Vec cannot fail.
            if let Ok(bytes) = wire::to_item(&story) {
                send(bytes);
            }
        }
    }
}

/// The stories of `traces` when they all lie on one server, read by its agent; `None` for
/// local logs.
pub(super) fn read(traces: &[PathBuf], index: Option<&DebugIndex>) -> Option<Vec<Story>> {
    let (host, _) = remote::locate(traces.first()?)?;
    let server = |p: &Path| remote::path_on(&host, p).map(|s| s.into_string());
    let asked: Vec<String> = traces.iter().map(|t| server(t)).collect::<Option<_>>()?;
    let req = Request::Stories {
        traces: asked,
        root: index.and_then(|i| server(&i.root)),
    };
    let mut stories = Vec::new();
    let result = remote::items(&host, req, &AtomicBool::new(false), |bytes| {
        let mut story: Story = wire::from_item(bytes)?;
        let server_path = story.path.to_string_lossy().into_owned();
        story.path = target::mount_path(&host, &server_path);
        stories.push(story);
        Ok(())
    });
    if let Err(e) = result {
        let why = format!("ssh://{}: {e}", host.authority());
        stories.extend(
            traces[stories.len().min(traces.len())..]
                .iter()
                .map(|t| unread(t, why.clone())),
        );
    }
    Some(stories)
}
